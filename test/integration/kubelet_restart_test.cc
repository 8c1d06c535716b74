// kubelet's whole restart sequence against a hub whose node rebooted while the cloud was gone
// (docs/offline-semantics.md, "kubelet's restart sequence"): the exact requests kubelet v1.26
// makes, with its User-Agent, Accept header and protobuf bodies, in its order, and what each gets
// back. First kubelet runs once online (so the hub has read what a node has), then the link drops
// and the node reboots, then kubelet starts again: its node, pods, configmaps, tokens, lease and
// CSINode must all be answered so the pods come back. Then the link returns and what kubelet wrote
// offline reaches the cloud.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/integration/kube_protobuf.h"
#include "test/integration/kubelet_node.h"

namespace yurthub::test {
namespace {

using testing::HasSubstr;

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
            protobuf_fixture("lease-update.pb"));
  EXPECT_EQ(
      lease_body(
          {"edge-1", "kube-node-lease", "", "", 0, {node}, "edge-1", 40, 1795424400, 250000000}),
      protobuf_fixture("lease-create.pb"));
  EXPECT_EQ(token_request_body({{"https://kubernetes.default.svc.cluster.local"},
                                3607,
                                "Pod",
                                "v1",
                                "web-0",
                                "0b9e5c1e-2f3a-4b5c-8d7e-6f5a4b3c2d1e"}),
            protobuf_fixture("token-request.pb"));
  EXPECT_EQ(
      csinode_body({"edge-1",
                    "7c0d9a8e-1b2c-4d3e-9f40-5a6b7c8d9e0f",
                    "4711",
                    1795424400,
                    {{"example.com/zone", "a"}},
                    {{"storage.alpha.kubernetes.io/migrated-plugins", "kubernetes.io/aws-ebs"}},
                    {node},
                    {{"csi.example.com", "edge-1", {"topology.example.com/zone"}, 16}}}),
      protobuf_fixture("csinode-update.pb"));
}

// Run as kubelet v1.26 (list+watch) and v1.35 (streaming lists, client-go's WatchListClient).
class KubeletRestart : public KubeletNode, public testing::WithParamInterface<ClientShape> {
 protected:
  KubeletRestart() { play_kubelet(GetParam()); }
};

INSTANTIATE_TEST_SUITE_P(Kubelet, KubeletRestart,
                         testing::Values(ClientShape::ListWatch, ClientShape::WatchList),
                         [](const auto& info) { return shape_name(info.param); });

TEST_P(KubeletRestart, AnOfflineRebootGetsTheNodesPodsBack) {
  first_start_online();
  reboot_offline();

  // Phase A: the informers. Node first (it gates the pods), services, the CSINode poll.
  auto nodes = list("/api/v1/nodes", "metadata.name%3Dedge-node-1");
  EXPECT_EQ(nodes.status, 200);
  EXPECT_EQ(list_items(nodes), 1u);
  auto node_watch =
      kubelet("GET",
              "/api/v1/nodes?allowWatchBookmarks=true&fieldSelector=metadata.name%3Dedge-node-1&"
              "resourceVersion=1&timeout=1s&timeoutSeconds=1&watch=true");
  EXPECT_EQ(node_watch.status, 200);
  EXPECT_EQ(list("/api/v1/services").status, 200);
  // kubelet created its CSINode online and never read it back: the hub kept the create's answer.
  auto csinode = kubelet("GET", kCSINode);
  ASSERT_EQ(csinode.status, 200) << "a 404 here makes kubelet create it, and exit when that fails";
  auto started =
      kubelet("POST", "/api/v1/namespaces/default/events", kProtobuf,
              named_object_body("v1", "Event", "edge-node-1.187a9b3c4d5e6f70", "default"));
  EXPECT_EQ(started.status, 201);

  // The pods, and what kubelet.Run lists.
  auto pods = list("/api/v1/pods", "spec.nodeName%3Dedge-node-1");
  EXPECT_EQ(pods.status, 200);
  EXPECT_EQ(list_items(pods), 3u) << "an empty pod list would make kubelet kill every pod";
  EXPECT_EQ(list("/apis/storage.k8s.io/v1/csidrivers").status, 200);
  EXPECT_EQ(list("/apis/node.k8s.io/v1/runtimeclasses").status, 200);

  // Registration: the node is known, so 409; kubelet then gets and patches it.
  auto registered =
      kubelet("POST", "/api/v1/nodes", kProtobuf, named_object_body("v1", "Node", kNodeName, ""));
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

  // A CSI driver registers (its node-driver-registrar restarted with the node): kubelet GETs the
  // CSINode and PUTs it back with the driver, as protobuf. Applied, and journaled for the cloud.
  const auto cached_csinode = parse_json(csinode.body);
  auto driver =
      kubelet("PUT", kCSINode, kProtobuf,
              csinode_body({kNodeName,
                            cached_csinode["metadata"]["uid"].GetString(),
                            cached_csinode["metadata"]["resourceVersion"].GetString(),
                            0,
                            {},
                            {},
                            {},
                            {{"csi.example.com", kNodeName, {"topology.example.com/zone"}, 8}}}));
  ASSERT_EQ(driver.status, 200) << driver.body;
  EXPECT_THAT(kubelet("GET", kCSINode).body, HasSubstr(R"("name":"csi.example.com")"));

  // The lease: read from the cache, renewed with protobuf, the resourceVersion as precondition.
  auto lease = kubelet("GET", kLease);
  ASSERT_EQ(lease.status, 200);
  const std::string uid = parse_json(lease.body)["metadata"]["uid"].GetString();
  for (std::int64_t renew : {1795428100, 1795428110}) {
    auto renewed = kubelet("PUT", kLease, kProtobuf,
                           lease_body({kNodeName,
                                       "kube-node-lease",
                                       uid,
                                       lease_rv_,
                                       1795424400,
                                       {},
                                       kNodeName,
                                       40,
                                       renew,
                                       0}));
    ASSERT_EQ(renewed.status, 200) << renewed.body;
    EXPECT_STREQ(
        parse_json(renewed.body)["spec"]["renewTime"].GetString(),
        renew == 1795428100 ? "2026-11-23T10:01:40.000000Z" : "2026-11-23T10:01:50.000000Z");
  }
  EXPECT_EQ(
      kubelet(
          "PUT", kLease, kProtobuf,
          lease_body({kNodeName, "kube-node-lease", uid, "1", 0, {}, kNodeName, 40, 1795428120, 0}))
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
  EXPECT_EQ(list_items(ca), 1u);
  auto token = request_web_token(true);
  ASSERT_EQ(token.status, 201) << token.body;
  EXPECT_EQ(parse_json(token.body)["status"]["token"].GetString(), online_token_);
  std::string proxy_uid;
  const auto pod_list = parse_json(pods.body);
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
  EXPECT_NE(parse_json(placeholder.body)["status"]["token"].GetString(), online_token_);
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_offline_token_requests_total{answer="kept"})"), 1);
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_offline_token_requests_total{answer="fake"})"), 1);
  // A token bound to another pod uid is NodeRestriction's 403.
  EXPECT_EQ(kubelet("POST", kWebToken, kProtobuf,
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
  link_returns();
  ASSERT_TRUE(eventually([&] { return cluster_.metric("node_yurthub_journal_entries") == 0; },
                         std::chrono::seconds(20)))
      << cluster_.hub().log();
  auto node = parse_json(cluster_.kubectl_direct({"get", "node", "edge-node-1", "-o", "json"}).out);
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
  auto web = parse_json(
      cluster_.kubectl_direct({"get", "pod", "web-0", "-n", "default", "-o", "json"}).out);
  ASSERT_TRUE(web.IsObject());
  EXPECT_STREQ(web["status"]["podIP"].GetString(), "192.0.2.11");
  auto cloud_csinode = cluster_.kubectl_direct({"get", "csinode", "edge-node-1", "-o", "json"});
  EXPECT_THAT(cloud_csinode.out, HasSubstr(R"("nodeID": "edge-node-1")")) << cloud_csinode.err;
  // Lease renewals never entered the journal: the only other PUT was the CSINode's.
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_journal_appended_total{kind="update"})"), 1);
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_journal_appended_total{kind="patch"})"), 2);
}

// A node the hub never saw kubelet start on: what kubelet never read is not known, and the hub
// says so rather than inventing (no pod list), but the lease and the CSINode are created locally:
// without its CSINode kubelet exits, and a registered node has one in the cloud already. The node
// itself the hub's own informer has read: 409.
TEST_P(KubeletRestart, AFirstStartOfflineKnowsNothingAndSaysSo) {
  reboot_offline();
  EXPECT_EQ(list("/api/v1/pods", "spec.nodeName%3Dedge-node-1").status, 404);
  EXPECT_EQ(
      kubelet("POST", "/api/v1/nodes", kProtobuf, named_object_body("v1", "Node", kNodeName, ""))
          .status,
      409);
  EXPECT_EQ(kubelet("GET", kCSINode).status, 404);
  auto csinode = kubelet("POST", "/apis/storage.k8s.io/v1/csinodes", kProtobuf,
                         named_object_body("storage.k8s.io/v1", "CSINode", kNodeName, ""));
  EXPECT_EQ(csinode.status, 201) << csinode.body;
  EXPECT_EQ(kubelet("GET", kCSINode).status, 200);
  EXPECT_EQ(cluster_.metric("node_yurthub_journal_entries"), 0);
  EXPECT_EQ(kubelet("GET", kLease).status, 404);
  auto created = kubelet(
      "POST", kLeases, kProtobuf,
      lease_body({kNodeName, "kube-node-lease", "", "", 0, {}, kNodeName, 40, 1795428000, 0}));
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(kubelet("GET", kLease).status, 200);
  EXPECT_EQ(
      kubelet(
          "POST", kLeases, kProtobuf,
          lease_body({kNodeName, "kube-node-lease", "", "", 0, {}, kNodeName, 40, 1795428000, 0}))
          .status,
      409);
}

}  // namespace
}  // namespace yurthub::test
