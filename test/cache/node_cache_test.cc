// NodeCache's hooks for what the node writes online: which write answers the cache keeps (its
// Node, its pods' status, its CSINode, its lease: kubelet never reads some of them back, and an
// offline restart needs them), where they go (the resource's get set, as a GET's answer would),
// and that other writes pass through untouched.
#include "cache/node_cache.h"

#include <filesystem>
#include <future>

#include <gtest/gtest.h>

#include "kube/request_info.h"
#include "test/cache/cache_test_support.h"

namespace yurthub::cache {
namespace {

constexpr const char* kKubelet = "kubelet/v1.26.1 (linux/amd64) kubernetes/8f94681";

class NodeCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/yurthub-node-cache-test-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    NodeCache::Options options;
    options.node_name = "edge-1";
    options.store = {dir_ + "/cache", 64u << 20, false};
    options.writer.commit_interval = std::chrono::milliseconds(1);
    auto opened = NodeCache::open(options, registry_);
    ASSERT_TRUE(opened) << opened.error().message;
    cache_ = std::move(*opened);
  }
  void TearDown() override {
    cache_.reset();
    std::filesystem::remove_all(dir_);
  }
  // The response `body` with `status` to `method target` from kubelet, relayed through the cache's
  // tap if it asks for one. Returns whether it did.
  bool relay(const char* method, const std::string& target, unsigned status,
             const std::string& body, const char* agent = kKubelet) {
    const auto info = kube::classify_request(method, target, agent);
    if (!cache_->cacheable(info)) return false;
    auto tap = cache_->tap(info, status, {});
    if (!tap) return false;
    tap->body(body);
    tap->end(true);
    cache_->flush();
    return true;
  }
  // The object kubelet's GET of `target` finds in its get set.
  std::optional<std::string> got(const std::string& target) {
    const auto info = kube::classify_request("GET", target, kKubelet);
    auto id = cache_->policy().identity(info);
    auto view = cache_->store().read();
    auto record = view->list(id->key());
    if (!record) return std::nullopt;
    auto object = view->object(record->set_id, info.namespace_name, info.name);
    if (!object) return std::nullopt;
    return std::string(object->json);
  }

  std::string dir_;
  base::MetricsRegistry registry_;
  std::unique_ptr<NodeCache> cache_;
};

TEST_F(NodeCacheTest, TheAnswersToWhatTheNodeWritesAreKept) {
  const std::string csinode =
      R"({"kind":"CSINode","apiVersion":"storage.k8s.io/v1","metadata":{"name":"edge-1",)"
      R"("uid":"c-1","resourceVersion":"12"},"spec":{"drivers":null}})";
  // The CSINode kubelet creates at its first start and never reads back.
  EXPECT_TRUE(relay("POST", "/apis/storage.k8s.io/v1/csinodes", 201, csinode));
  EXPECT_EQ(got("/apis/storage.k8s.io/v1/csinodes/edge-1"), csinode);
  // Its node: registration, then status patches.
  const std::string node =
      R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"edge-1","resourceVersion":"20"},)"
      R"("status":{"conditions":[{"type":"Ready","status":"True"}]}})";
  EXPECT_TRUE(relay("PATCH", "/api/v1/nodes/edge-1/status", 200, node));
  EXPECT_EQ(got("/api/v1/nodes/edge-1"), node);
  const std::string registered =
      R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"edge-1","resourceVersion":"21"}})";
  EXPECT_TRUE(relay("POST", "/api/v1/nodes", 201, registered));
  EXPECT_EQ(got("/api/v1/nodes/edge-1"), registered);
  // A pod's status, as the status manager patches it: the whole pod comes back.
  const std::string pod =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default",)"
      R"("resourceVersion":"30"},"spec":{"nodeName":"edge-1"},"status":{"podIP":"10.0.0.7"}})";
  EXPECT_TRUE(relay("PATCH", "/api/v1/namespaces/default/pods/web-0/status", 200, pod));
  EXPECT_EQ(got("/api/v1/namespaces/default/pods/web-0"), pod);
  // Its lease, created and renewed.
  const std::string lease =
      R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"edge-1",)"
      R"("namespace":"kube-node-lease","resourceVersion":"40"},"spec":{}})";
  EXPECT_TRUE(relay("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-1",
                    200, lease));
  EXPECT_EQ(got("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-1"), lease);
}

TEST_F(NodeCacheTest, OtherWritesAndFailedOnesAreNotKept) {
  const std::string pod =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default",)"
      R"("resourceVersion":"30"}})";
  // A pod's spec, a configmap, a deletion: not what the node writes about itself.
  EXPECT_FALSE(relay("PATCH", "/api/v1/namespaces/default/pods/web-0", 200, pod));
  EXPECT_FALSE(relay("POST", "/api/v1/namespaces/default/configmaps", 201,
                     R"({"metadata":{"name":"c","namespace":"default"}})"));
  EXPECT_FALSE(relay("DELETE", "/api/v1/nodes/edge-1", 200,
                     R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"edge-1"}})"));
  EXPECT_FALSE(
      relay("PATCH", "/api/v1/namespaces/default/pods/web-0/ephemeralcontainers", 200, pod));
  // A refused write's Status, or a component that is not a cache agent: nothing kept.
  EXPECT_FALSE(
      relay("POST", "/apis/storage.k8s.io/v1/csinodes", 409, R"({"kind":"Status","code":409})"));
  EXPECT_FALSE(relay("POST", "/apis/storage.k8s.io/v1/csinodes", 201,
                     R"({"kind":"CSINode","metadata":{"name":"edge-1","resourceVersion":"3"}})",
                     "some-tool/1.0"));
  EXPECT_FALSE(got("/api/v1/namespaces/default/pods/web-0"));
  EXPECT_FALSE(got("/apis/storage.k8s.io/v1/csinodes/edge-1"));
}

// A watch that resumes a list the cache does not have (evicted, or dropped as written before
// owners were recorded) is ended with 410 at once, so its client lists again and the list is
// cached; a watch that follows the client's list in this run, or starts from now, is not.
TEST_F(NodeCacheTest, AWatchResumingAListTheCacheLacksMakesItsClientListAgain) {
  const std::string watch =
      "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-1&resourceVersion=120&watch=true";
  auto info = kube::classify_request("GET", watch, kKubelet);
  ASSERT_TRUE(cache_->cacheable(info));
  EXPECT_TRUE(cache_->tap(info, 200, {})->failed()) << "resumes a list never cached";
  auto from_now = kube::classify_request(
      "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-1&watch=true", kKubelet);
  EXPECT_FALSE(cache_->tap(from_now, 200, {})->failed());
  // Its client lists: the watch that follows resumes that list.
  auto list =
      kube::classify_request("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-1", kKubelet);
  auto list_tap = cache_->tap(list, 200, {});
  list_tap->body(R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"120"},)"
                 R"("items":[]})");
  list_tap->end(true);
  EXPECT_FALSE(cache_->tap(info, 200, {})->failed());
}

TEST_F(NodeCacheTest, AnOfflineWriteWaitsForTheListsRelayedBeforeIt) {
  const std::string list_target = "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-1";
  const auto list_info = kube::classify_request("GET", list_target, kKubelet);
  test_support::Blocker blocker(cache_->taps());
  // kubelet's pod list reached kubelet just before the link dropped; the cache has not digested
  // it yet.
  auto tap = cache_->tap(list_info, 200, {});
  ASSERT_TRUE(tap);
  tap->body(R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"40"},"items":[)"
            R"({"metadata":{"name":"web-0","namespace":"default","uid":"u-1",)"
            R"("resourceVersion":"40"},"spec":{"nodeName":"edge-1"},)"
            R"("status":{"phase":"Pending"}}]})");
  tap->end(true);
  // Offline, kubelet reports the pod running.
  auto info =
      kube::classify_request("PATCH", "/api/v1/namespaces/default/pods/web-0/status", kKubelet);
  info.privileged_peer = true;
  ASSERT_TRUE(cache_->serves_offline_write(info));
  const hub::OfflineWrite write{"PATCH",
                                "/api/v1/namespaces/default/pods/web-0/status",
                                "application/merge-patch+json",
                                kKubelet,
                                "",
                                R"({"status":{"phase":"Running"}})"};
  test_support::RecordingWriter out;
  boost::asio::io_context io;
  auto answered = boost::asio::co_spawn(io, cache_->serve_offline_write(info, write, out),
                                        boost::asio::use_future);
  io.run_for(std::chrono::milliseconds(100));
  EXPECT_EQ(out.status, 0u);  // not answered while the list waits to be digested
  blocker.release();
  io.run();
  EXPECT_EQ(answered.get(), 200u) << out.body;
  cache_->flush();
  // The write landed on the listed pod, after the list: the list did not overwrite it.
  auto id = cache_->policy().identity(list_info);
  auto view = cache_->store().read();
  auto record = view->list(id->key());
  ASSERT_TRUE(record);
  auto pod = view->object(record->set_id, "default", "web-0");
  ASSERT_TRUE(pod);
  EXPECT_NE(std::string(pod->json).find(R"("phase":"Running")"), std::string::npos) << pod->json;
}

}  // namespace
}  // namespace yurthub::cache
