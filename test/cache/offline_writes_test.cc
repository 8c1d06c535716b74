// Offline writes end to end through a real LMDB store: what kubelet's patches, updates, lease
// renewals and events get back while the node is offline, what the cache then holds, and what
// the journal keeps for replay (cache/offline_writes.h, cache/journal.h).
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <boost/asio/detached.hpp>

#include "cache/cache_policy.h"
#include "cache/journal.h"
#include "cache/local_events.h"
#include "cache/offline_writes.h"
#include "cache/response_taps.h"
#include "kube/bearer_token.h"
#include "test/cache/cache_test_support.h"

namespace yurthub::cache {
namespace {

using namespace yurthub::cache::test_support;

constexpr const char* kPod =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default",)"
    R"("uid":"u-1","resourceVersion":"40","labels":{"app":"web"}},"spec":{"nodeName":"edge-node-1"},)"
    R"("status":{"phase":"Pending","podIP":"10.0.0.5"}})";
constexpr const char* kLease =
    R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"edge-node-1",)"
    R"("namespace":"kube-node-lease","uid":"l-1","resourceVersion":"41"},)"
    R"("spec":{"holderIdentity":"edge-node-1","renewTime":"2026-01-01T00:00:00.000000Z"}})";

rapidjson::Document parse(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  return doc;
}

// As kubelet sends it: from root on the node (the session's RequestInfo::privileged_peer).
kube::RequestInfo request(const char* method, const std::string& target,
                          const char* agent = "kubelet/v1.32.4") {
  auto info = kube::classify_request(method, target, agent);
  info.privileged_peer = true;
  return info;
}

constexpr const char* kTestOp = R"({"op":"test","path":"/kind","value":"Pod"})";
// Each copies metadata.labels into itself, doubling it.
const std::string kCopyLabels =
    R"({"op":"copy","from":"/metadata/labels","path":"/metadata/labels/l)";

// A JSON patch of `count` operations, `op(i)` each.
template <class Op>
std::string many_ops(int count, Op op) {
  std::string out = "[";
  for (int i = 0; i < count; ++i) out += (i ? "," : "") + op(i);
  return out + "]";
}

class OfflineWritesTest : public StoreFixture {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    set_limits(JournalLimits{});
  }
  void set_limits(JournalLimits limits, const std::string& node = "edge-node-1") {
    writes_.reset();
    callers_.reset();
    tokens_.reset();
    journal_.reset();
    journal_registry_ = std::make_unique<base::MetricsRegistry>();
    journal_ = std::make_unique<Journal>(*journal_registry_, limits);
    authority_ = std::make_unique<NodeAuthority>(node);
    tokens_ = std::make_unique<TokenKeeper>(*store_, *writer_, *journal_registry_,
                                            [this] { return now_; });
    callers_ =
        std::make_unique<Callers>(*store_, *writer_, *journal_registry_,
                                  "a test key of thirty-two bytes!!", [this] { return now_; });
    writes_ = std::make_unique<OfflineWrites>(*writer_, *store_, *journal_, events_, policy_,
                                              *metrics_, *tokens_, *callers_, authority_.get());
  }
  std::string journal_metrics() { return journal_registry_->render(); }
  void TearDown() override {
    writes_.reset();
    callers_.reset();
    tokens_.reset();
    StoreFixture::TearDown();
  }
  // The request as the session classifies it: with `authorization`, the caller's own token.
  kube::RequestInfo as_caller(const char* method, const std::string& target, const char* agent,
                              std::string_view authorization) {
    auto info = request(method, target, agent);
    if (!authorization.empty())
      info.bearer_token = std::string(kube::bearer_token(authorization).value_or(""));
    return info;
  }
  // Caches `json` as the answer to a GET of `target` by `agent`; with `authorization`, as the
  // answer to that caller's own token (which the apiserver thereby accepted).
  void cache_get(const std::string& target, const std::string& json,
                 const char* agent = "kubelet/v1.32.4", std::string_view authorization = "") {
    const auto info = as_caller("GET", target, agent, authorization);
    auto id = policy_.identity(info);
    ASSERT_TRUE(id);
    id->owner = callers_->owner_of(info);
    if (info.bearer_token) callers_->accepted(info);
    auto tap = make_object_tap(*writer_, *metrics_, *id);
    tap->body(json);
    tap->end(true);
    writer_->flush();
  }
  // A write as `agent` makes it; with `authorization`, under the caller's own token instead of
  // the hub's (the node's) credentials.
  RecordingWriter write(const char* method, const std::string& target, std::string content_type,
                        std::string body, const char* agent = "kubelet/v1.32.4",
                        const char* authorization = "", bool privileged_peer = true) {
    auto info = as_caller(method, target, agent, authorization);
    info.privileged_peer = privileged_peer;
    EXPECT_TRUE(writes_->handles(info)) << method << " " << target;
    hub::OfflineWrite w{method, target, content_type, agent, authorization, std::move(body)};
    RecordingWriter out;
    run(writes_->serve(info, w, out));
    return out;
  }
  std::vector<JournalEntry> journaled() {
    std::vector<JournalEntry> out;
    store_->read()->scan_journal([&](std::uint64_t seq, std::string_view bytes) {
      auto entry = decode_journal_entry(seq, bytes);
      EXPECT_TRUE(entry) << bytes;
      if (entry) out.push_back(*entry);
      return true;
    });
    return out;
  }
  // web-0 as kubelet's get set holds it: the node's, or with `authorization`, that caller's.
  std::string kubelet_pod(std::string_view authorization = "") {
    const auto info =
        as_caller("GET", "/api/v1/namespaces/default/pods/web-0", "kubelet/v1.32.4", authorization);
    auto id = policy_.identity(info);
    id->owner = callers_->owner_of(info);
    return object_json(id->key(), "default", "web-0").value_or("");
  }

  std::unique_ptr<base::MetricsRegistry> journal_registry_;
  CachePolicy policy_;
  LocalEvents events_;
  std::unique_ptr<Journal> journal_;
  std::unique_ptr<NodeAuthority> authority_;
  std::unique_ptr<TokenKeeper> tokens_;
  std::unique_ptr<Callers> callers_;
  std::int64_t now_ = 1795428000;  // 2026-11-23T10:00:00Z
  std::unique_ptr<OfflineWrites> writes_;
};

TEST_F(OfflineWritesTest, APodStatusPatchIsAppliedJournaledAndShownToOfflineWatches) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod, "coredns/1.11");  // another component
  int wakes = 0;
  auto watch = events_.subscribe("kubelet", "", "v1", "pods", "", [&] { ++wakes; });

  auto out =
      write("PATCH", "/api/v1/namespaces/default/pods/web-0/status", "application/merge-patch+json",
            R"({"metadata":{"uid":"u-1"},"status":{"phase":"Running","podIP":"10.0.0.5"}})");
  ASSERT_EQ(out.status, 200u) << out.body;
  auto answered = parse(out.body);
  EXPECT_STREQ(answered["status"]["phase"].GetString(), "Running");
  EXPECT_STREQ(answered["metadata"]["resourceVersion"].GetString(),
               "40");  // only the cloud bumps it

  // Both components' copies changed; a later offline get sees it.
  EXPECT_STREQ(parse(kubelet_pod())["status"]["phase"].GetString(), "Running");
  auto coredns =
      policy_.identity(request("GET", "/api/v1/namespaces/default/pods/web-0", "coredns/1.11"));
  EXPECT_STREQ(
      parse(*object_json(coredns->key(), "default", "web-0"))["status"]["phase"].GetString(),
      "Running");

  auto entries = journaled();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].method, "PATCH");
  EXPECT_EQ(entries[0].target, "/api/v1/namespaces/default/pods/web-0/status");
  EXPECT_EQ(entries[0].component, "kubelet");
  EXPECT_EQ(entries[0].base_resource_version, 40u);
  EXPECT_TRUE(journal_->pending("/v1/pods/default/web-0"));

  auto changes = watch->take();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(wakes, 1);
  EXPECT_NE(changes[0].json.find("Running"), std::string::npos);
}

// A cache agent writing under its own token (the apiserver decides what it may do): the hub
// applies the write as the apiserver's registry would.
constexpr const char* kOperator = "Bearer operator-token";

TEST_F(OfflineWritesTest, AStatusWriteChangesOnlyStatusAndAnObjectWriteKeepsIt) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod, "kubelet/v1.32.4", kOperator);
  auto status =
      write("PATCH", "/api/v1/namespaces/default/pods/web-0/status", "application/merge-patch+json",
            R"({"metadata":{"labels":{"app":"db"}},"status":{"phase":"Running"}})",
            "kube-proxy/v1.26.1", kOperator);
  ASSERT_EQ(status.status, 200u) << status.body;
  auto pod = parse(kubelet_pod(kOperator));
  EXPECT_STREQ(pod["metadata"]["labels"]["app"].GetString(), "web");
  EXPECT_STREQ(pod["status"]["phase"].GetString(), "Running");

  auto labels =
      write("PATCH", "/api/v1/namespaces/default/pods/web-0", "application/merge-patch+json",
            R"({"metadata":{"labels":{"app":"db"}},"status":{"phase":"Failed"}})",
            "kube-proxy/v1.26.1", kOperator);
  ASSERT_EQ(labels.status, 200u) << labels.body;
  pod = parse(kubelet_pod(kOperator));
  EXPECT_STREQ(pod["metadata"]["labels"]["app"].GetString(), "db");
  EXPECT_STREQ(pod["status"]["phase"].GetString(), "Running");
  EXPECT_EQ(journaled().size(), 2u);
}

// A caller's own token is never the node: offline its write changes only what that token read
// online, and a token the apiserver never accepted on this node changes nothing (issue 30: a
// made-up token once switched every check off and rewrote kubelet's pod).
TEST_F(OfflineWritesTest, ACallersTokenWritesOnlyItsOwnCopiesAndAnUnknownOneNothing) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  const std::string rewrite =
      R"({"spec":{"containers":[{"name":"c","image":"attacker.example/rootkit:latest"}]}})";
  auto forged =
      write("PATCH", "/api/v1/namespaces/default/pods/web-0", "application/merge-patch+json",
            rewrite, "kubelet/v1.32.4", "Bearer not-a-real-token");
  EXPECT_EQ(forged.status, 503u) << forged.body;
  EXPECT_NE(forged.body.find("cannot verify this bearer token"), std::string::npos);
  // Accepted online, but it never read web-0: not cached for it.
  cache_get("/api/v1/namespaces/default/configmaps/c",
            R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"default",)"
            R"("resourceVersion":"3"}})",
            "kubelet/v1.32.4", kOperator);
  EXPECT_EQ(write("PATCH", "/api/v1/namespaces/default/pods/web-0", "application/merge-patch+json",
                  rewrite, "kubelet/v1.32.4", kOperator)
                .status,
            503u);
  EXPECT_EQ(kubelet_pod().find("attacker"), std::string::npos);
  EXPECT_TRUE(journaled().empty());
  EXPECT_NE(journal_metrics().find(R"(node_yurthub_journal_refused_total{reason="unverified"} 1)"),
            std::string::npos);
}

// The node's identity may change a pod's status only, never its labels: the apiserver would
// refuse, so the hub refuses now rather than answer 200 and lose the write on replay.
TEST_F(OfflineWritesTest, TheNodeMayNotChangeAPodsLabelsOffline) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  auto object = write("PATCH", "/api/v1/namespaces/default/pods/web-0",
                      "application/merge-patch+json", R"({"metadata":{"labels":{"app":"db"}}})");
  EXPECT_EQ(object.status, 403u);
  EXPECT_EQ(
      object.body,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods )"
      R"(\"web-0\" is forbidden: User \"system:node:edge-node-1\" cannot patch resource )"
      R"(\"pods\" in API group \"\" in the namespace \"default\"","reason":"Forbidden",)"
      R"("details":{"name":"web-0","kind":"pods"},"code":403})");
  auto status =
      write("PATCH", "/api/v1/namespaces/default/pods/web-0/status", "application/merge-patch+json",
            R"({"metadata":{"labels":{"app":"db"}},"status":{"phase":"Running"}})");
  EXPECT_EQ(status.status, 403u);
  EXPECT_NE(status.body.find("cannot update labels through pod status"), std::string::npos)
      << status.body;
  EXPECT_TRUE(journaled().empty());
  auto pod = parse(kubelet_pod());
  EXPECT_STREQ(pod["metadata"]["labels"]["app"].GetString(), "web");
  EXPECT_STREQ(pod["status"]["phase"].GetString(), "Pending");
  EXPECT_NE(journal_metrics().find(R"(node_yurthub_journal_refused_total{reason="forbidden"} 2)"),
            std::string::npos);
}

TEST_F(OfflineWritesTest, PatchesTheHubCannotApplyAreRefusedAndNotJournaled) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod, "kubelet/v1.32.4", kOperator);
  struct Case {
    const char* method;
    std::string target, type, body;
    unsigned code;
  } cases[] = {
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/json-patch+json",
       R"([{"op":"test","path":"/status/phase","value":"Running"}])", 422},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/apply-patch+yaml",
       "status: {}", 415},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/merge-patch+json",
       "{not json", 400},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0/status", "application/merge-patch+json",
       R"({"metadata":{"uid":"someone-else"}})", 409},
      {"PUT", "/api/v1/namespaces/default/pods/web-0", "application/json",
       R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default","resourceVersion":"39"}})",
       409},
      {"PUT", "/api/v1/namespaces/default/pods/web-0", "application/vnd.kubernetes.protobuf",
       "k8s\0", 415},
      {"PATCH", "/api/v1/namespaces/default/pods/web-1", "application/merge-patch+json", "{}", 503},
      // Untrusted JSON: nesting that once overflowed the writer's stack, the apiserver's limits.
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/merge-patch+json",
       std::string(1u << 20, '['), 400},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/json-patch+json",
       many_ops(10001, [](int) { return std::string(kTestOp); }), 413},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/json-patch+json",
       many_ops(64, [](int i) { return kCopyLabels + std::to_string(i) + R"("})"; }), 422},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.type + " " + c.body.substr(0, 100));
    // Object writes come with an operator's token (the node may not write a pod itself).
    const bool status_write = c.target.ends_with("/status");
    auto out =
        write(c.method, c.target, c.type, c.body, "kubelet/v1.32.4", status_write ? "" : kOperator);
    EXPECT_EQ(out.status, c.code) << out.body;
    EXPECT_NE(out.body.find("\"kind\":\"Status\""), std::string::npos);
  }
  EXPECT_TRUE(journaled().empty());
  EXPECT_STREQ(parse(kubelet_pod())["status"]["phase"].GetString(), "Pending");
  EXPECT_STREQ(parse(kubelet_pod(kOperator))["status"]["phase"].GetString(), "Pending");
}

TEST_F(OfflineWritesTest, AnUpdateAtTheCachedVersionIsKeptWithItsBaseForTheThreeWayMerge) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod, "kubelet/v1.32.4", kOperator);
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);  // the node's own copy
  auto out = write(
      "PUT", "/api/v1/namespaces/default/pods/web-0", "application/json",
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default",)"
      R"("uid":"u-1","resourceVersion":"40","labels":{"app":"web","tier":"x"}},"spec":{"nodeName":"edge-node-1"}})",
      "kube-proxy/v1.26.1", kOperator);
  ASSERT_EQ(out.status, 200u) << out.body;
  EXPECT_STREQ(parse(kubelet_pod(kOperator))["metadata"]["labels"]["tier"].GetString(), "x");
  const auto node_copy = parse(kubelet_pod());
  ASSERT_TRUE(node_copy.IsObject()) << "the node's copy is still cached";
  EXPECT_FALSE(node_copy["metadata"]["labels"].HasMember("tier")) << "the node's copy";
  auto entries = journaled();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].method, "PUT");
  EXPECT_STREQ(parse(entries[0].base)["metadata"]["resourceVersion"].GetString(), "40");
}

TEST_F(OfflineWritesTest, LeaseRenewalsAreAnsweredLocallyAndNeverJournaled) {
  const std::string target =
      "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-node-1";
  cache_get(target, kLease);
  std::string renewed = kLease;
  renewed.replace(renewed.find("2026-01-01"), 10, "2026-02-02");
  auto json = write("PUT", target, "application/json", renewed);
  ASSERT_EQ(json.status, 200u) << json.body;
  EXPECT_NE(json.body.find("2026-02-02"), std::string::npos);
  EXPECT_TRUE(journaled().empty());
}

std::string protobuf_fixture(const std::string& name) {
  std::ifstream in(std::string(YURTHUB_TESTDATA_DIR) + "/protobuf/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// kubelet renews its lease with a protobuf PUT (test/testdata/protobuf/lease-update.pb, made by
// protoc): its spec is applied to the cached lease, its resourceVersion is the precondition.
TEST_F(OfflineWritesTest, AProtobufLeaseRenewalIsAppliedToTheCachedLease) {
  set_limits(JournalLimits{}, "edge-1");
  const std::string target =
      "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-1";
  cache_get(
      target,
      R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"edge-1",)"
      R"("namespace":"kube-node-lease","uid":"c1b6f0a2-3d4e-4f5a-9b8c-7d6e5f4a3b2c",)"
      R"("resourceVersion":"1234"},"spec":{"holderIdentity":"edge-1","leaseDurationSeconds":40,)"
      R"("renewTime":"2026-11-23T09:59:55.000000Z"}})");
  auto renewed = write("PUT", target, "application/vnd.kubernetes.protobuf",
                       protobuf_fixture("lease-update.pb"));
  ASSERT_EQ(renewed.status, 200u) << renewed.body;
  auto lease = parse(renewed.body);
  EXPECT_STREQ(lease["spec"]["renewTime"].GetString(), "2026-11-23T10:00:05.123456Z");
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"].GetInt(), 40);
  EXPECT_STREQ(lease["metadata"]["resourceVersion"].GetString(), "1234");
  auto id = policy_.identity(request("GET", target));
  EXPECT_NE(object_json(id->key(), "kube-node-lease", "edge-1")->find("10:00:05.123456Z"),
            std::string::npos);
  EXPECT_TRUE(journaled().empty());

  // A renewal based on another resourceVersion is a conflict, as the apiserver says; garbage is
  // 400.
  cache_get(target,
            R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"edge-1",)"
            R"("namespace":"kube-node-lease","resourceVersion":"1300"},"spec":{}})");
  EXPECT_EQ(write("PUT", target, "application/vnd.kubernetes.protobuf",
                  protobuf_fixture("lease-update.pb"))
                .status,
            409u);
  EXPECT_EQ(
      write("PUT", target, "application/vnd.kubernetes.protobuf", std::string("k8s\0\n", 5)).status,
      400u);
}

TEST_F(OfflineWritesTest, KubeletsCreatesAtStartAnsweredFromTheCache) {
  set_limits(JournalLimits{}, "edge-1");
  const std::string leases = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
  // No lease cached: kubelet's create is kept locally, then it exists.
  auto created = write("POST", leases, "application/vnd.kubernetes.protobuf",
                       protobuf_fixture("lease-create.pb"));
  ASSERT_EQ(created.status, 201u) << created.body;
  auto lease = parse(created.body);
  EXPECT_STREQ(lease["kind"].GetString(), "Lease");
  EXPECT_STREQ(lease["metadata"]["namespace"].GetString(), "kube-node-lease");
  EXPECT_STREQ(lease["metadata"]["ownerReferences"][0]["kind"].GetString(), "Node");
  EXPECT_STREQ(lease["spec"]["renewTime"].GetString(), "2026-11-23T09:00:00.250000Z");
  auto again = write("POST", leases, "application/vnd.kubernetes.protobuf",
                     protobuf_fixture("lease-create.pb"));
  EXPECT_EQ(again.status, 409u);
  EXPECT_NE(again.body.find(R"(leases.coordination.k8s.io \"edge-1\" already exists)"),
            std::string::npos)
      << again.body;

  // The node: 409 when cached (kubelet then gets and patches it), 503 when the hub cannot know.
  EXPECT_EQ(write("POST", "/api/v1/nodes", "application/vnd.kubernetes.protobuf",
                  protobuf_fixture("node-create.pb"))
                .status,
            503u);
  cache_get(
      "/api/v1/nodes/edge-1",
      R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"edge-1","resourceVersion":"7"}})");
  auto node = write("POST", "/api/v1/nodes", "application/vnd.kubernetes.protobuf",
                    protobuf_fixture("node-create.pb"));
  EXPECT_EQ(node.status, 409u);
  EXPECT_NE(
      node.body.find(
          R"("reason":"AlreadyExists","details":{"name":"edge-1","kind":"nodes"},"code":409)"),
      std::string::npos)
      << node.body;
  cache_get(
      "/apis/storage.k8s.io/v1/csinodes/edge-1",
      R"({"kind":"CSINode","apiVersion":"storage.k8s.io/v1","metadata":{"name":"edge-1","resourceVersion":"8"}})");
  EXPECT_EQ(write("POST", "/apis/storage.k8s.io/v1/csinodes", "application/vnd.kubernetes.protobuf",
                  protobuf_fixture("csinode-create.pb"))
                .status,
            409u);
  EXPECT_TRUE(journaled().empty());
}

// kubelet's CSI plugin reads its CSINode at start and exits when it can neither read nor create
// it. A cache that has none (a hub upgraded from a version that kept no write answers) keeps
// kubelet's create locally; it is never journaled: a registered node has one in the cloud.
TEST_F(OfflineWritesTest, ACSINodeCreateTheCacheCannotAnswerIsKeptLocally) {
  set_limits(JournalLimits{}, "edge-1");
  const std::string csinodes = "/apis/storage.k8s.io/v1/csinodes";
  auto created = write("POST", csinodes, "application/vnd.kubernetes.protobuf",
                       protobuf_fixture("csinode-create.pb"));
  ASSERT_EQ(created.status, 201u) << created.body;
  auto csinode = parse(created.body);
  EXPECT_STREQ(csinode["kind"].GetString(), "CSINode");
  EXPECT_STREQ(csinode["apiVersion"].GetString(), "storage.k8s.io/v1");
  EXPECT_FALSE(csinode["metadata"].HasMember("namespace"));
  EXPECT_STREQ(csinode["metadata"]["resourceVersion"].GetString(), "1");
  EXPECT_STREQ(csinode["metadata"]["ownerReferences"][0]["kind"].GetString(), "Node");
  EXPECT_TRUE(csinode["spec"]["drivers"].IsNull());
  auto id = policy_.identity(request("GET", csinodes + "/edge-1"));
  EXPECT_EQ(object_json(id->key(), "", "edge-1"), created.body);
  EXPECT_EQ(write("POST", csinodes, "application/vnd.kubernetes.protobuf",
                  protobuf_fixture("csinode-create.pb"))
                .status,
            409u);
  // Another node's CSINode is NodeRestriction's 403, never kept.
  EXPECT_EQ(write("POST", csinodes, "application/json",
                  R"({"metadata":{"name":"edge-2"},"spec":{"drivers":null}})")
                .status,
            403u);
  EXPECT_TRUE(journaled().empty());
}

// When a CSI driver registers, kubelet GETs its CSINode and PUTs it back, as protobuf, with the
// driver added (test/testdata/protobuf/csinode-update.pb). Offline the update is applied as its
// JSON form and journaled as JSON, so that the replay can re-base it if the cloud's moved on.
TEST_F(OfflineWritesTest, AProtobufCSINodeUpdateIsAppliedAndJournaledAsJson) {
  set_limits(JournalLimits{}, "edge-1");
  const std::string target = "/apis/storage.k8s.io/v1/csinodes/edge-1";
  cache_get(
      target,
      R"({"kind":"CSINode","apiVersion":"storage.k8s.io/v1","metadata":{"name":"edge-1",)"
      R"("uid":"7c0d9a8e-1b2c-4d3e-9f40-5a6b7c8d9e0f","resourceVersion":"4711",)"
      R"("creationTimestamp":"2026-11-23T09:00:00Z","managedFields":[{"manager":"kubelet"}]},)"
      R"("spec":{"drivers":null}})");
  auto updated = write("PUT", target, "application/vnd.kubernetes.protobuf",
                       protobuf_fixture("csinode-update.pb"));
  ASSERT_EQ(updated.status, 200u) << updated.body;
  auto csinode = parse(updated.body);
  ASSERT_TRUE(csinode["spec"]["drivers"].IsArray());
  EXPECT_STREQ(csinode["spec"]["drivers"][0]["name"].GetString(), "csi.example.com");
  EXPECT_EQ(csinode["spec"]["drivers"][0]["allocatable"]["count"].GetInt(), 16);
  EXPECT_STREQ(csinode["metadata"]["resourceVersion"].GetString(), "4711");
  // What the protobuf body cannot carry is kept from the cached object, as the apiserver does.
  EXPECT_STREQ(csinode["metadata"]["creationTimestamp"].GetString(), "2026-11-23T09:00:00Z");
  EXPECT_STREQ(csinode["metadata"]["managedFields"][0]["manager"].GetString(), "kubelet");
  auto id = policy_.identity(request("GET", target));
  EXPECT_EQ(object_json(id->key(), "", "edge-1"), updated.body);
  auto entries = journaled();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].method, "PUT");
  EXPECT_EQ(entries[0].content_type, "application/json");
  auto sent = parse(entries[0].body);
  ASSERT_TRUE(sent.IsObject()) << entries[0].body;
  EXPECT_STREQ(sent["spec"]["drivers"][0]["nodeID"].GetString(), "edge-1");
  EXPECT_STREQ(sent["metadata"]["resourceVersion"].GetString(), "4711");

  // A stale resourceVersion is the apiserver's 409; a lease sent to a CSINode's URL is a 400;
  // kinds the hub cannot read as protobuf keep their 415.
  cache_get(target,
            R"({"kind":"CSINode","apiVersion":"storage.k8s.io/v1","metadata":{"name":"edge-1",)"
            R"("uid":"7c0d9a8e-1b2c-4d3e-9f40-5a6b7c8d9e0f","resourceVersion":"4800"},)"
            R"("spec":{"drivers":null}})");
  EXPECT_EQ(write("PUT", target, "application/vnd.kubernetes.protobuf",
                  protobuf_fixture("csinode-update.pb"))
                .status,
            409u);
  EXPECT_EQ(write("PUT", target, "application/vnd.kubernetes.protobuf",
                  protobuf_fixture("lease-update.pb"))
                .status,
            400u);
  cache_get(
      "/api/v1/nodes/edge-1",
      R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"edge-1","resourceVersion":"7"}})");
  EXPECT_EQ(write("PUT", "/api/v1/nodes/edge-1", "application/vnd.kubernetes.protobuf",
                  protobuf_fixture("node-create.pb"))
                .status,
            415u);
}

TEST_F(OfflineWritesTest, AProtobufEventIsJournaledAsSent) {
  set_limits(JournalLimits{}, "edge-1");
  const std::string body = protobuf_fixture("event-create.pb");
  auto out = write("POST", "/api/v1/namespaces/default/events",
                   "application/vnd.kubernetes.protobuf", body);
  ASSERT_EQ(out.status, 201u) << out.body;
  EXPECT_EQ(out.content_type, "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(out.body, body);
  auto entries = journaled();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].body, body);
  EXPECT_EQ(entries[0].object, "/v1/events/default/edge-1.17a9b3c4d5e6f708");
  // events.k8s.io is not the node's to write.
  auto other = write("POST", "/apis/events.k8s.io/v1/namespaces/default/events", "application/json",
                     R"({"metadata":{"name":"x"}})");
  EXPECT_EQ(other.status, 403u);
}

TEST_F(OfflineWritesTest, EventsAreJournaledUpToTheirBoundOldestDroppedFirst) {
  set_limits(JournalLimits{10000, 64u << 20, 2});
  for (const char* name : {"a", "b", "c"}) {
    auto out = write("POST", "/api/v1/namespaces/default/events", "application/json",
                     std::string(R"({"kind":"Event","apiVersion":"v1","metadata":{"name":")") +
                         name + R"(","namespace":"default"},"reason":"Started"})");
    EXPECT_EQ(out.status, 201u) << out.body;
  }
  auto generated =
      write("POST", "/api/v1/namespaces/default/events", "application/json",
            R"({"metadata":{"generateName":"web-0.","namespace":"default"},"reason":"Pulled"})");
  EXPECT_EQ(generated.status, 201u);
  EXPECT_NE(parse(generated.body)["metadata"]["name"].GetString(), std::string("web-0."));
  auto entries = journaled();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_NE(entries[0].body.find("\"c\""), std::string::npos);
  EXPECT_NE(journal_metrics().find("node_yurthub_journal_removed_total{outcome=\"event_bound\"} 2"),
            std::string::npos)
      << journal_metrics();
}

TEST_F(OfflineWritesTest, AFullJournalRefusesWithA503AndKeepsWhatItHas) {
  set_limits(JournalLimits{1, 64u << 20, 1000});
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  const std::string target = "/api/v1/namespaces/default/pods/web-0/status";
  EXPECT_EQ(
      write("PATCH", target, "application/merge-patch+json", R"({"status":{"phase":"Running"}})")
          .status,
      200u);
  auto full =
      write("PATCH", target, "application/merge-patch+json", R"({"status":{"phase":"Failed"}})");
  EXPECT_EQ(full.status, 503u);
  EXPECT_NE(full.body.find("journal is full"), std::string::npos) << full.body;
  EXPECT_STREQ(parse(kubelet_pod())["status"]["phase"].GetString(), "Running");
  EXPECT_NE(journal_metrics().find("node_yurthub_journal_refused_total{reason=\"full\"} 1"),
            std::string::npos)
      << journal_metrics();
}

// Issue 30: a local user without a token writes as the node, but may fill only its share of the
// journal (half); the rest stays for kubelet (root on the node), also after a restart.
TEST_F(OfflineWritesTest, CallersOtherThanRootFillOnlyTheirShareOfTheJournal) {
  set_limits(JournalLimits{4, 64u << 20, 1000});
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  const std::string target = "/api/v1/namespaces/default/pods/web-0/status";
  auto patch = [&](const char* phase, bool privileged) {
    return write("PATCH", target, "application/merge-patch+json",
                 std::string(R"({"status":{"phase":")") + phase + R"("}})", "kubelet/v1.32.4", "",
                 privileged)
        .status;
  };
  EXPECT_EQ(patch("Running", false), 200u);
  EXPECT_EQ(patch("Running", false), 200u);
  auto refused = write("PATCH", target, "application/merge-patch+json",
                       R"({"status":{"phase":"Failed"}})", "kubelet/v1.32.4", "", false);
  EXPECT_EQ(refused.status, 503u);
  EXPECT_NE(refused.body.find("kept for kubelet"), std::string::npos) << refused.body;
  EXPECT_EQ(patch("Running", true), 200u) << "kubelet's half";
  EXPECT_EQ(patch("Running", true), 200u);
  EXPECT_EQ(patch("Running", true), 503u) << "the whole journal is full";
  auto entries = journaled();
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_FALSE(entries[0].privileged_peer);
  EXPECT_TRUE(entries[3].privileged_peer);

  // After a restart the share is counted from the store: with room for a fifth entry, the others'
  // half (2 of 5) is still full.
  base::MetricsRegistry fresh;
  Journal reloaded(fresh, JournalLimits{5, 64u << 20, 1000});
  reloaded.load(*store_->read());
  std::string why;
  (void)store_->write([&](WriteTxn& txn) -> Status {
    auto append = reloaded.stage_append(txn, entries[0], false);
    if (!append) {
      why = append.error().message;
      return append.error();
    }
    reloaded.abort_append(*append);
    return make_error("staged only to see whether it fits");
  });
  EXPECT_NE(why.find("kept for kubelet"), std::string::npos) << why;
}

TEST_F(OfflineWritesTest, TheJournalIsStillThereAfterARestart) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  write("PATCH", "/api/v1/namespaces/default/pods/web-0/status", "application/merge-patch+json",
        R"({"status":{"phase":"Running"}})");
  base::MetricsRegistry fresh;
  Journal reloaded(fresh, JournalLimits{});
  reloaded.load(*store_->read());
  EXPECT_EQ(reloaded.size(), 1u);
  EXPECT_TRUE(reloaded.pending("/v1/pods/default/web-0"));
  EXPECT_FALSE(reloaded.pending("/v1/pods/default/web-1"));
}

// Many clients writing at once while offline: the writer runs one write's task right after
// another's commit, before the first client resumes. Every acknowledged write must be in the
// journal under its own sequence number (they once shared one, and the second overwrote the
// first after both clients got their answer).
TEST_F(OfflineWritesTest, ConcurrentOfflineWritersEachKeepTheirOwnJournalEntry) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  constexpr int kWriters = 60;
  boost::asio::io_context io;
  std::vector<RecordingWriter> outs(kWriters);
  for (int i = 0; i < kWriters; ++i) {
    const bool event = i % 2 == 0;
    const std::string target = event ? "/api/v1/namespaces/default/events"
                                     : "/api/v1/namespaces/default/pods/web-0/status";
    const std::string body =
        event ? R"({"metadata":{"name":"e)" + std::to_string(i) + R"(","namespace":"default"}})"
              : R"({"status":{"message":"m)" + std::to_string(i) + R"("}})";
    boost::asio::co_spawn(
        io,
        [this, target, body, event, &out = outs[i]]() -> boost::asio::awaitable<void> {
          const char* method = event ? "POST" : "PATCH";
          const char* type = event ? "application/json" : "application/merge-patch+json";
          auto info = request(method, target);
          hub::OfflineWrite w{method, target, type, "kubelet/v1.32.4", "", body};
          co_await writes_->serve(info, w, out);
        },
        boost::asio::detached);
  }
  io.run();
  writer_->wait_tasks();  // the writer's last post to `io` has returned before `io` goes
  int acknowledged = 0;
  for (const auto& out : outs) acknowledged += out.status / 100 == 2 ? 1 : 0;
  EXPECT_EQ(acknowledged, kWriters);
  auto entries = journaled();
  EXPECT_EQ(static_cast<int>(entries.size()), acknowledged);
  EXPECT_EQ(static_cast<int>(journal_->size()), acknowledged);
  std::set<std::uint64_t> seqs;
  for (const auto& e : entries) seqs.insert(e.seq);
  EXPECT_EQ(seqs.size(), entries.size());
}

TEST(JournalEntryTest, EncodesAndDecodesEveryField) {
  JournalEntry e{7,
                 1700000000,
                 "PATCH",
                 "/api/v1/namespaces/d/pods/p/status?fieldManager=x",
                 "application/strategic-merge-patch+json",
                 "kubelet/v1.32",
                 "kubelet",
                 "Bearer t",
                 "/v1/pods/d/p",
                 40,
                 "",
                 "{\"status\":{\"podIP\":\"10.0.0.5\"}}"};
  auto decoded = decode_journal_entry(7, encode_journal_entry(e));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, e);
  EXPECT_FALSE(decode_journal_entry(1, "{\"v\":2}"));
  EXPECT_FALSE(decode_journal_entry(1, "not json"));
}

// kubelet's events are protobuf: every byte value survives, and the entry stays readable text.
TEST(JournalEntryTest, ProtobufBodiesSurviveAsBase64) {
  std::string body("k8s\0\x0a\x02\x80\xff\x00\"\\end", 13);
  JournalEntry e{8,
                 1700000000,
                 "POST",
                 "/api/v1/namespaces/default/events",
                 "application/vnd.kubernetes.protobuf",
                 "kubelet/v1.26.1",
                 "kubelet",
                 "",
                 "/v1/events/default/e",
                 0,
                 "",
                 body};
  const std::string encoded = encode_journal_entry(e);
  EXPECT_EQ(encoded.find('\0'), std::string::npos);
  EXPECT_NE(encoded.find(R"("bodyBase64":true)"), std::string::npos);
  auto decoded = decode_journal_entry(8, encoded);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->body, body);
  EXPECT_EQ(*decoded, e);
}

// Entries journaled before base/base64.h (Beast's encoder: standard alphabet, padded) read back
// the same, and are written byte for byte as before.
TEST(JournalEntryTest, EarlierEntriesOnDiskStillDecode) {
  const std::string on_disk =
      R"({"v":1,"created":1700000000,"baseResourceVersion":0,"method":"POST",)"
      R"("target":"/api/v1/namespaces/default/events",)"
      R"("contentType":"application/vnd.kubernetes.protobuf","userAgent":"kubelet/v1.26.1",)"
      R"("component":"kubelet","authorization":"","object":"/v1/events/default/e","base":"",)"
      R"("body":"azhzAAqA/w==","bodyBase64":true})";
  auto decoded = decode_journal_entry(8, on_disk);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->body, std::string("k8s\0\n\x80\xff", 7));
  EXPECT_EQ(encode_journal_entry(*decoded), on_disk);
  std::string bad = on_disk;
  bad.replace(bad.find("azhzAAqA/w=="), 12, "azhzAAqA/w=");  // truncated padding
  EXPECT_FALSE(decode_journal_entry(8, bad));
}

}  // namespace
}  // namespace yurthub::cache
