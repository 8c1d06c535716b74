// A node's kubelet against the hub; see kubelet_node.h.
#include "test/integration/kubelet_node.h"

#include <fstream>
#include <sstream>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "test/integration/kube_protobuf.h"

namespace yurthub::test {

std::string protobuf_fixture(const std::string& name) {
  std::ifstream in(std::string(YURTHUB_TESTDATA_DIR) + "/protobuf/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t list_items(const HttpResponse& r) {
  auto doc = parse_json(r.body);
  return doc.IsObject() && doc.HasMember("items") && doc["items"].IsArray() ? doc["items"].Size()
                                                                            : 0;
}

HttpResponse KubeletNode::kubelet(const std::string& method, const std::string& target,
                                  const std::string& content_type, const std::string& body) {
  Headers headers = {{"User-Agent", agent()}, {"Accept", kKubeletAccept}};
  if (!content_type.empty()) headers.emplace_back("Content-Type", content_type);
  return http_request(port(), method, target, headers, body);
}

HttpResponse KubeletNode::list(const std::string& path, const std::string& field_selector) {
  if (shape_ == ClientShape::ListWatch) {
    std::string target = path + "?";
    if (!field_selector.empty()) target += "fieldSelector=" + field_selector + "&";
    return kubelet("GET", target + "limit=500&resourceVersion=0");
  }
  ReflectorOptions options;
  options.port = port();
  options.path = path;
  options.field_selector = field_selector;
  options.user_agent = agent();
  options.accept = kKubeletAccept;
  ReflectorClient informer(options);
  // Synced, or its first round failed: the streaming list and then the list it fell back to.
  const auto round_failed = [&] {
    const auto statuses = informer.statuses();
    return statuses.size() >= 2 && statuses[0] != 200 && statuses[1] != 200;
  };
  test_support::eventually([&] { return informer.syncs() > 0 || round_failed(); },
                           std::chrono::seconds(10), std::chrono::milliseconds(5));
  HttpResponse answer;
  if (informer.syncs() == 0) {
    // Its failed round's last answer; 0 for a stream that stayed silent (never synced).
    const auto statuses = informer.statuses();
    answer.status = statuses.empty() || statuses.back() == 200 ? 0 : statuses.back();
    if (!round_failed()) ADD_FAILURE() << "a silent stream: " << path << "?" << field_selector;
    return answer;
  }
  answer.status = 200;
  answer.body = R"({"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":")" +
                informer.resource_version() + R"("},"items":[)";
  bool first = true;
  for (const auto& [key, json] : informer.objects()) {
    answer.body += (first ? "" : ",") + json;
    first = false;
  }
  answer.body += "]}";
  return answer;
}

HttpResponse KubeletNode::request_web_token(bool protobuf) {
  if (protobuf) {
    return kubelet("POST", kWebToken, kProtobuf,
                   token_request_body({{"https://kubernetes.default.svc.cluster.local"},
                                       3607,
                                       "Pod",
                                       "v1",
                                       "web-0",
                                       kWebUid}));
  }
  return kubelet(
      "POST", kWebToken, "application/json",
      std::string(R"({"spec":{"audiences":["https://kubernetes.default.svc.cluster.local"],)"
                  R"("expirationSeconds":3607,"boundObjectRef":{"kind":"Pod","apiVersion":"v1",)"
                  R"("name":"web-0","uid":")") +
          kWebUid + R"("}}})");
}

void KubeletNode::first_start_online() {
  ASSERT_EQ(list_items(list("/api/v1/nodes", "metadata.name%3Dedge-node-1")), 1u);
  ASSERT_EQ(list("/api/v1/services").status, 200);
  ASSERT_EQ(list("/apis/storage.k8s.io/v1/csidrivers").status, 200);
  ASSERT_EQ(list("/apis/node.k8s.io/v1/runtimeclasses").status, 200);
  ASSERT_EQ(list_items(list("/api/v1/pods", "spec.nodeName%3Dedge-node-1")), 3u);
  // The CSI plugin: no CSINode yet, so kubelet creates it (as JSON: the fake apiserver reads no
  // protobuf). kubelet never reads it back (csi_plugin.go reads it once, at start).
  ASSERT_EQ(kubelet("GET", kCSINode).status, 404);
  ASSERT_EQ(kubelet("POST", "/apis/storage.k8s.io/v1/csinodes", "application/json",
                    R"({"metadata":{"name":"edge-node-1"},"spec":{"drivers":null}})")
                .status,
            201);
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
  auto lease = parse_json(created.body);
  lease["spec"]["renewTime"].SetString("2026-11-23T10:00:10.000000Z");
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  lease.Accept(w);
  auto renewed = kubelet("PUT", kLease, "application/json", buffer.GetString());
  ASSERT_EQ(renewed.status, 200) << renewed.body;
  lease_rv_ = parse_json(renewed.body)["metadata"]["resourceVersion"].GetString();
  // Each pod: its configmaps by name, its token.
  ASSERT_EQ(
      list_items(list("/api/v1/namespaces/default/configmaps", "metadata.name%3Dkube-root-ca.crt")),
      1u);
  auto token = request_web_token(false);
  ASSERT_EQ(token.status, 201) << token.body;
  online_token_ = parse_json(token.body)["status"]["token"].GetString();
  ASSERT_TRUE(eventually(
      [&] { return cluster_.metric(R"(node_yurthub_tokens_kept_total{outcome="kept"})") == 1; },
      std::chrono::seconds(5)));
  ASSERT_EQ(kubelet("GET", "/api/v1/namespaces/default/pods/web-0").status, 200);
  // What the hub relayed is on disk before the node loses power.
  ASSERT_TRUE(cluster_.wait_cache_committed(0));
}

void KubeletNode::reboot_offline() {
  cluster_.apiserver().signal(SIGSTOP);
  ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(false));
  cluster_.hub().signal(SIGTERM);
  cluster_.hub().wait_exit(std::chrono::seconds(10));
  cluster_.start_hub();
}

void KubeletNode::link_returns() { cluster_.apiserver().signal(SIGCONT); }

}  // namespace yurthub::test
