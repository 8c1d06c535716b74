// kubelet's whole restart sequence against a hub whose node rebooted while the cloud was gone
// (docs/offline-semantics.md, "kubelet's restart sequence"): the exact requests kubelet v1.26
// makes, with its User-Agent, Accept header and protobuf bodies, in its order, and what each gets
// back. First kubelet runs once online (so the hub has read what a node has), then the link drops
// and the node reboots, then kubelet starts again: its node, pods, configmaps, tokens, lease and
// CSINode must all be answered so the pods come back. Then the link returns and what kubelet wrote
// offline reaches the cloud.
#include <signal.h>

#include <fstream>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "test/integration/cluster.h"
#include "test/integration/http_client.h"
#include "test/integration/kube_protobuf.h"

namespace yurthub::test {
namespace {

using testing::HasSubstr;

constexpr const char* kAgent = "kubelet/v1.26.1 (linux/amd64) kubernetes/8f94681";
constexpr const char* kAccept = "application/vnd.kubernetes.protobuf,application/json";
constexpr const char* kProtobuf = "application/vnd.kubernetes.protobuf";
constexpr const char* kNode = "edge-node-1";
constexpr const char* kWebUid = "5f0c2f4e-8a51-4c3e-9d62-2b7f0e1a0c01";  // demo-objects.json
const std::string kLeases = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
const std::string kLease = kLeases + "/edge-node-1";
const std::string kToken = "/api/v1/namespaces/default/serviceaccounts/default/token";

rapidjson::Document parse(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  return doc;
}

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(YURTHUB_TESTDATA_DIR) + "/protobuf/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The test's own protobuf encoder writes what protoc wrote from upstream's .proto files.
TEST(KubeProtobuf, EncodesKubeletsBodiesAsClientGoDoes) {
  const OwnerRef node{"Node", "edge-1", "5a3c0e4e-9b7a-4c1e-8a2f-1f0f6b7d9e01", "v1"};
  EXPECT_EQ(lease_body({"edge-1",
                        "kube-node-lease",
                        "c1b6f0a2-3d4e-4f5a-9b8c-7d6e5f4a3b2c",
                        "1234",
                        1795424400,
                        {node},
                        "edge-1",
                        40,
                        1795428005,
                        123456000}),
            fixture("lease-update.pb"));
  EXPECT_EQ(
      lease_body(
          {"edge-1", "kube-node-lease", "", "", 0, {node}, "edge-1", 40, 1795424400, 250000000}),
      fixture("lease-create.pb"));
  EXPECT_EQ(token_request_body({{"https://kubernetes.default.svc.cluster.local"},
                                3607,
                                "Pod",
                                "v1",
                                "web-0",
                                "0b9e5c1e-2f3a-4b5c-8d7e-6f5a4b3c2d1e"}),
            fixture("token-request.pb"));
}

class KubeletRestart : public testing::Test {
 protected:
  void SetUp() override {
    cluster_.start_apiserver();
    cluster_.start_hub();
  }
  int port() const { return cluster_.proxy_port(); }
  // One request as kubelet sends it.
  HttpResponse kubelet(const std::string& method, const std::string& target,
                       const std::string& content_type = "", const std::string& body = "") {
    Headers headers = {{"User-Agent", kAgent}, {"Accept", kAccept}};
    if (!content_type.empty()) headers.emplace_back("Content-Type", content_type);
    return http_request(port(), method, target, headers, body);
  }
  // kubelet's informers list with resourceVersion=0 and limit=500.
  HttpResponse list(const std::string& path, const std::string& field_selector = "") {
    std::string target = path + "?";
    if (!field_selector.empty()) target += "fieldSelector=" + field_selector + "&";
    return kubelet("GET", target + "limit=500&resourceVersion=0");
  }
  std::size_t items(const HttpResponse& r) {
    auto doc = parse(r.body);
    return doc.IsObject() && doc.HasMember("items") ? doc["items"].Size() : 0;
  }
  // The first run, online: kubelet reads and writes what it does at every start.
  void first_start_online();
  // The node reboots while the cloud is unreachable: the apiserver dies, the hub restarts.
  void reboot_offline() {
    cluster_.stop_apiserver(SIGKILL);
    ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(false));
    cluster_.hub().signal(SIGTERM);
    cluster_.hub().wait_exit(std::chrono::seconds(10));
    cluster_.start_hub();
  }

  Cluster cluster_{demo_cluster()};
  std::string lease_rv_;
  std::string online_token_;
};

void KubeletRestart::first_start_online() {
  ASSERT_EQ(items(list("/api/v1/nodes", "metadata.name%3Dedge-node-1")), 1u);
  ASSERT_EQ(list("/api/v1/services").status, 200);
  ASSERT_EQ(list("/apis/storage.k8s.io/v1/csidrivers").status, 200);
  ASSERT_EQ(list("/apis/node.k8s.io/v1/runtimeclasses").status, 200);
  ASSERT_EQ(items(list("/api/v1/pods", "spec.nodeName%3Dedge-node-1")), 3u);
  // The CSI plugin: no CSINode yet, so kubelet creates it (as JSON: the fake apiserver reads no
  // protobuf), then reads it back.
  ASSERT_EQ(kubelet("GET", "/apis/storage.k8s.io/v1/csinodes/edge-node-1").status, 404);
  ASSERT_EQ(kubelet("POST", "/apis/storage.k8s.io/v1/csinodes", "application/json",
                    R"({"metadata":{"name":"edge-node-1"},"spec":{"drivers":null}})")
                .status,
            201);
  ASSERT_EQ(kubelet("GET", "/apis/storage.k8s.io/v1/csinodes/edge-node-1").status, 200);
  // Registration: the node exists, so kubelet gets it.
  ASSERT_EQ(
      kubelet("POST", "/api/v1/nodes", "application/json", R"({"metadata":{"name":"edge-node-1"}})")
          .status,
      409);
  ASSERT_EQ(kubelet("GET", "/api/v1/nodes/edge-node-1").status, 200);
  // The lease: none yet, so kubelet creates it, then renews it.
  ASSERT_EQ(kubelet("GET", kLease).status, 404);
  auto created = kubelet("POST", kLeases, "application/json",
                         R"({"metadata":{"name":"edge-node-1","namespace":"kube-node-lease"},)"
                         R"("spec":{"holderIdentity":"edge-node-1","leaseDurationSeconds":40,)"
                         R"("renewTime":"2026-11-23T10:00:00.000000Z"}})");
  ASSERT_EQ(created.status, 201) << created.body;
  auto lease = parse(created.body);
  lease["spec"]["renewTime"].SetString("2026-11-23T10:00:10.000000Z");
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  lease.Accept(w);
  auto renewed = kubelet("PUT", kLease, "application/json", buffer.GetString());
  ASSERT_EQ(renewed.status, 200) << renewed.body;
  lease_rv_ = parse(renewed.body)["metadata"]["resourceVersion"].GetString();
  // Each pod: its configmaps by name, its token.
  ASSERT_EQ(
      items(list("/api/v1/namespaces/default/configmaps", "metadata.name%3Dkube-root-ca.crt")), 1u);
  auto token = kubelet(
      "POST", kToken, "application/json",
      std::string(R"({"spec":{"audiences":["https://kubernetes.default.svc.cluster.local"],)"
                  R"("expirationSeconds":3607,"boundObjectRef":{"kind":"Pod","apiVersion":"v1",)"
                  R"("name":"web-0","uid":")") +
          kWebUid + R"("}}})");
  ASSERT_EQ(token.status, 201) << token.body;
  online_token_ = parse(token.body)["status"]["token"].GetString();
  ASSERT_TRUE(eventually(
      [&] { return cluster_.metric(R"(node_yurthub_tokens_kept_total{outcome="kept"})") == 1; },
      std::chrono::seconds(5)));
  ASSERT_EQ(kubelet("GET", "/api/v1/namespaces/default/pods/web-0").status, 200);
}

TEST_F(KubeletRestart, AnOfflineRebootGetsTheNodesPodsBack) {
  first_start_online();
  reboot_offline();

  // Phase A: the informers. Node first (it gates the pods), services, the CSINode poll.
  auto nodes = list("/api/v1/nodes", "metadata.name%3Dedge-node-1");
  EXPECT_EQ(nodes.status, 200);
  EXPECT_EQ(items(nodes), 1u);
  auto node_watch =
      kubelet("GET",
              "/api/v1/nodes?allowWatchBookmarks=true&fieldSelector=metadata.name%3Dedge-node-1&"
              "resourceVersion=1&timeout=1s&timeoutSeconds=1&watch=true");
  EXPECT_EQ(node_watch.status, 200);
  EXPECT_EQ(list("/api/v1/services").status, 200);
  auto csinode = kubelet("GET", "/apis/storage.k8s.io/v1/csinodes/edge-node-1");
  EXPECT_EQ(csinode.status, 200) << "a 404 here makes kubelet create it, and exit when that fails";
  auto started =
      kubelet("POST", "/api/v1/namespaces/default/events", kProtobuf,
              named_object_body("v1", "Event", "edge-node-1.187a9b3c4d5e6f70", "default"));
  EXPECT_EQ(started.status, 201);

  // The pods, and what kubelet.Run lists.
  auto pods = list("/api/v1/pods", "spec.nodeName%3Dedge-node-1");
  EXPECT_EQ(pods.status, 200);
  EXPECT_EQ(items(pods), 3u) << "an empty pod list would make kubelet kill every pod";
  EXPECT_EQ(list("/apis/storage.k8s.io/v1/csidrivers").status, 200);
  EXPECT_EQ(list("/apis/node.k8s.io/v1/runtimeclasses").status, 200);

  // Registration: the node is known, so 409; kubelet then gets and patches it.
  auto registered =
      kubelet("POST", "/api/v1/nodes", kProtobuf, named_object_body("v1", "Node", kNode, ""));
  EXPECT_EQ(registered.status, 409);
  EXPECT_THAT(registered.body, HasSubstr(R"("reason":"AlreadyExists")"));
  EXPECT_EQ(kubelet("GET", "/api/v1/nodes/edge-node-1").status, 200);
  EXPECT_EQ(kubelet("GET", "/api/v1/nodes/edge-node-1?resourceVersion=0").status, 200);
  auto node_status =
      kubelet("PATCH", "/api/v1/nodes/edge-node-1/status", "application/strategic-merge-patch+json",
              R"({"status":{"$setElementOrder/conditions":[{"type":"Ready"}],)"
              R"("conditions":[{"type":"Ready","status":"True","reason":"KubeletReady",)"
              R"("message":"kubelet is posting ready status after an offline reboot"}]}})");
  EXPECT_EQ(node_status.status, 200) << node_status.body;

  // The lease: read from the cache, renewed with protobuf, the resourceVersion as precondition.
  auto lease = kubelet("GET", kLease);
  ASSERT_EQ(lease.status, 200);
  const std::string uid = parse(lease.body)["metadata"]["uid"].GetString();
  for (std::int64_t renew : {1795428100, 1795428110}) {
    auto renewed = kubelet(
        "PUT", kLease, kProtobuf,
        lease_body(
            {kNode, "kube-node-lease", uid, lease_rv_, 1795424400, {}, kNode, 40, renew, 0}));
    ASSERT_EQ(renewed.status, 200) << renewed.body;
    EXPECT_STREQ(
        parse(renewed.body)["spec"]["renewTime"].GetString(),
        renew == 1795428100 ? "2026-11-23T10:01:40.000000Z" : "2026-11-23T10:01:50.000000Z");
  }
  EXPECT_EQ(
      kubelet("PUT", kLease, kProtobuf,
              lease_body({kNode, "kube-node-lease", uid, "1", 0, {}, kNode, 40, 1795428120, 0}))
          .status,
      409);
  EXPECT_EQ(kubelet("PUT", kLeases + "/edge-node-2", kProtobuf,
                    lease_body(
                        {"edge-node-2", "kube-node-lease", "", "", 0, {}, "edge-node-2", 40, 1, 0}))
                .status,
            403);

  // Each pod's volumes: its configmaps by name, its token (the real one kept from before the
  // reboot), a placeholder for a pod whose token was never kept.
  auto ca = list("/api/v1/namespaces/default/configmaps", "metadata.name%3Dkube-root-ca.crt");
  EXPECT_EQ(items(ca), 1u);
  auto token = kubelet(
      "POST", kToken, kProtobuf,
      token_request_body(
          {{"https://kubernetes.default.svc.cluster.local"}, 3607, "Pod", "v1", "web-0", kWebUid}));
  ASSERT_EQ(token.status, 201) << token.body;
  EXPECT_EQ(parse(token.body)["status"]["token"].GetString(), online_token_);
  std::string proxy_uid;
  const auto pod_list = parse(pods.body);
  for (const auto& item : pod_list["items"].GetArray()) {
    if (std::string(item["metadata"]["name"].GetString()) == "kube-proxy-edge1") {
      proxy_uid = item["metadata"]["uid"].GetString();
    }
  }
  auto placeholder =
      kubelet("POST", "/api/v1/namespaces/kube-system/serviceaccounts/default/token", kProtobuf,
              token_request_body({{"https://kubernetes.default.svc.cluster.local"},
                                  3607,
                                  "Pod",
                                  "v1",
                                  "kube-proxy-edge1",
                                  proxy_uid}));
  ASSERT_EQ(placeholder.status, 201) << placeholder.body;
  EXPECT_NE(parse(placeholder.body)["status"]["token"].GetString(), online_token_);
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_offline_token_requests_total{answer="kept"})"), 1);
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_offline_token_requests_total{answer="fake"})"), 1);
  // A token bound to another pod uid is NodeRestriction's 403.
  EXPECT_EQ(kubelet("POST", kToken, kProtobuf,
                    token_request_body({{}, 3607, "Pod", "v1", "web-0", "not-its-uid"}))
                .status,
            403);

  // The pod's status after its containers restarted; never its labels.
  EXPECT_EQ(kubelet("GET", "/api/v1/namespaces/default/pods/web-0").status, 200);
  auto pod_status = kubelet("PATCH", "/api/v1/namespaces/default/pods/web-0/status",
                            "application/strategic-merge-patch+json",
                            std::string(R"({"metadata":{"uid":")") + kWebUid +
                                R"("},"status":{"podIP":"192.0.2.11","phase":"Running"}})");
  EXPECT_EQ(pod_status.status, 200) << pod_status.body;
  auto labels =
      kubelet("PATCH", "/api/v1/namespaces/default/pods/web-0",
              "application/strategic-merge-patch+json", R"({"metadata":{"labels":{"edge":"x"}}})");
  EXPECT_EQ(labels.status, 403);
  // A selector the apiserver refuses is refused offline too.
  EXPECT_EQ(kubelet("GET", "/api/v1/pods?fieldSelector=spec.bogus%3Dx").status, 400);

  // The cloud returns: what kubelet wrote reaches it; the lease stays local.
  cluster_.start_apiserver();
  ASSERT_TRUE(eventually([&] { return cluster_.metric("node_yurthub_journal_entries") == 0; },
                         std::chrono::seconds(20)))
      << cluster_.hub().log();
  auto node = parse(cluster_.kubectl_direct({"get", "node", "edge-node-1", "-o", "json"}).out);
  ASSERT_TRUE(node.IsObject());
  bool ready_after_reboot = false;
  for (const auto& c : node["status"]["conditions"].GetArray()) {
    ready_after_reboot |=
        std::string(c["type"].GetString()) == "Ready" && c.HasMember("message") &&
        std::string(c["message"].GetString()).find("offline reboot") != std::string::npos;
  }
  EXPECT_TRUE(ready_after_reboot)
      << cluster_.kubectl_direct({"get", "node", "edge-node-1", "-o", "json"}).out
      << cluster_.hub().log();
  auto web =
      parse(cluster_.kubectl_direct({"get", "pod", "web-0", "-n", "default", "-o", "json"}).out);
  ASSERT_TRUE(web.IsObject());
  EXPECT_STREQ(web["status"]["podIP"].GetString(), "192.0.2.11");
  // Lease renewals never entered the journal: the only PUTs kubelet made offline were leases.
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_journal_appended_total{kind="update"})"), -1);
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_journal_appended_total{kind="patch"})"), 2);
}

// A node the hub never saw kubelet start on: what kubelet never read is not known, and the hub
// says so rather than inventing (no pod list; a CSINode create is a 503, kubelet retries), but the
// lease is created locally. The node itself the hub's own informer has read: 409.
TEST_F(KubeletRestart, AFirstStartOfflineKnowsNothingAndSaysSo) {
  reboot_offline();
  EXPECT_EQ(list("/api/v1/pods", "spec.nodeName%3Dedge-node-1").status, 404);
  EXPECT_EQ(kubelet("POST", "/api/v1/nodes", kProtobuf, named_object_body("v1", "Node", kNode, ""))
                .status,
            409);
  EXPECT_EQ(kubelet("POST", "/apis/storage.k8s.io/v1/csinodes", kProtobuf,
                    named_object_body("storage.k8s.io/v1", "CSINode", kNode, ""))
                .status,
            503);
  EXPECT_EQ(kubelet("GET", kLease).status, 404);
  auto created =
      kubelet("POST", kLeases, kProtobuf,
              lease_body({kNode, "kube-node-lease", "", "", 0, {}, kNode, 40, 1795428000, 0}));
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(kubelet("GET", kLease).status, 200);
  EXPECT_EQ(kubelet("POST", kLeases, kProtobuf,
                    lease_body({kNode, "kube-node-lease", "", "", 0, {}, kNode, 40, 1795428000, 0}))
                .status,
            409);
}

}  // namespace
}  // namespace yurthub::test
