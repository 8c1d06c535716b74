// The filter chain with the real binaries: node edge-node-1 in pool-a (edge-node-1, -2) of a
// cluster with pool-b (edge-node-3, -4) and one Service per topologyKeys value. Through the hub,
// kube-proxy sees only its pool's (or node's) endpoints in lists and watches; moving a node
// between pools or changing a Service's annotation corrects the open watch; cilium-agent is
// filtered once yurt-hub-cfg names it, without a restart; a pod on a hostNetwork pool's node
// reaches kubelet exactly as the apiserver sent it.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/writer.h>

#include <signal.h>
#include <unistd.h>

#include <map>
#include <set>
#include <string>

#include "test/integration/cluster.h"
#include "test/integration/http_client.h"

namespace yurthub::test {
namespace {

constexpr const char* kKubeProxy = "kube-proxy/v1.32.4 (linux/amd64) kubernetes/abc1234";
constexpr const char* kCilium = "cilium-agent/1.16.3";
const std::string kSlices = "/apis/discovery.k8s.io/v1/endpointslices";

using Nodes = std::set<std::string>;

// Slice (or Endpoints) name -> the nodes of its endpoints, for a list or a single object.
std::map<std::string, Nodes> endpoints_by_object(const rapidjson::Value& doc) {
  std::map<std::string, Nodes> out;
  auto add = [&](const rapidjson::Value& o) {
    Nodes nodes;
    if (o.HasMember("endpoints") && o["endpoints"].IsArray()) {
      for (const auto& e : o["endpoints"].GetArray()) nodes.insert(e["nodeName"].GetString());
    }
    if (o.HasMember("subsets") && o["subsets"].IsArray()) {
      for (const auto& s : o["subsets"].GetArray()) {
        for (const auto& a : s["addresses"].GetArray()) nodes.insert(a["nodeName"].GetString());
      }
    }
    out[o["metadata"]["name"].GetString()] = nodes;
  };
  if (doc.HasMember("items")) {
    for (const auto& item : doc["items"].GetArray()) add(item);
  } else {
    add(doc);
  }
  return out;
}

std::map<std::string, Nodes> endpoints_by_object(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_FALSE(doc.HasParseError()) << json;
  if (doc.HasParseError()) return {};
  return endpoints_by_object(doc);
}

const Nodes kAll = {"edge-node-1", "edge-node-2", "edge-node-3", "edge-node-4"};
const Nodes kPoolA = {"edge-node-1", "edge-node-2"};
const Nodes kSelf = {"edge-node-1"};

class Filters : public testing::Test {
 protected:
  Filters() : cluster_(topology_cluster()) {}
  void SetUp() override {
    cluster_.start_apiserver();
    cluster_.start_hub();
  }
  HttpResponse get_as(const char* agent, const std::string& target) {
    return http_request(cluster_.proxy_port(), "GET", target, {{"User-Agent", agent}});
  }
  std::string list_rv(const std::string& body) {
    rapidjson::Document doc;
    doc.Parse(body.c_str());
    return doc["metadata"]["resourceVersion"].GetString();
  }
  // Waits until the watch's latest event for `name` shows `nodes`.
  bool wait_for_nodes(const WatchStream& w, const std::string& name, const Nodes& nodes) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
      Nodes last;
      bool seen = false;
      for (const auto& line : w.events()) {
        rapidjson::Document e;
        e.Parse(line.c_str());
        if (e.HasParseError() || !e.HasMember("object") || !e["object"].HasMember("metadata"))
          continue;
        auto by = endpoints_by_object(e["object"]);
        if (by.count(name)) {
          last = by[name];
          seen = true;
        }
      }
      if (seen && last == nodes) return true;
      usleep(50000);
    }
    return false;
  }
  void patch_direct(const std::vector<std::string>& args) {
    auto r = cluster_.kubectl_direct(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  Cluster cluster_;
};

TEST_F(Filters, KubeProxySeesOnlyItsPoolsOrNodesEndpoints) {
  auto slices = get_as(kKubeProxy, kSlices);
  ASSERT_EQ(slices.status, 200) << slices.body;
  EXPECT_EQ(endpoints_by_object(slices.body), (std::map<std::string, Nodes>{{"by-host-x1", kSelf},
                                                                            {"by-pool-x1", kPoolA},
                                                                            {"by-zone-x1", kPoolA},
                                                                            {"by-other-x1", kAll},
                                                                            {"plain-x1", kAll}}));
  // v1 Endpoints are filtered too (YurtHub 1.7 silently stopped: #2613).
  auto endpoints = get_as(kKubeProxy, "/api/v1/namespaces/default/endpoints");
  ASSERT_EQ(endpoints.status, 200);
  EXPECT_EQ(endpoints_by_object(endpoints.body)["by-pool"], kPoolA);
  EXPECT_EQ(endpoints_by_object(endpoints.body)["by-host"], kSelf);
  // kubectl (not a filtered component) sees everything.
  auto r = cluster_.kubectl({"get", "endpointslices", "-n", "default", "by-pool-x1", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(endpoints_by_object(r.out)["by-pool-x1"], kAll);
  EXPECT_GT(cluster_.metric(
                R"(node_yurthub_filter_objects_total{filter="servicetopology",result="modified"})"),
            0);

  // Offline, the cache answers with what kube-proxy was served: the same filtered slices.
  cluster_.stop_apiserver(SIGKILL);
  ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(false));
  auto offline = get_as(kKubeProxy, kSlices);
  ASSERT_EQ(offline.status, 200) << offline.body;
  EXPECT_EQ(endpoints_by_object(offline.body), endpoints_by_object(slices.body));
}

TEST_F(Filters, OpenWatchIsCorrectedWhenPoolsOrAnnotationsChange) {
  auto list = get_as(kKubeProxy, kSlices);
  ASSERT_EQ(list.status, 200);
  WatchStream watch(
      cluster_.proxy_port(),
      kSlices + "?watch=true&allowWatchBookmarks=true&resourceVersion=" + list_rv(list.body),
      kKubeProxy);
  ASSERT_TRUE(watch.wait_for_header(std::chrono::seconds(5)));
  ASSERT_EQ(watch.status(), 200);

  // edge-node-3 moves into pool-a: the pool-scoped slices now include it.
  patch_direct({"patch", "nodepools.apps.openyurt.io", "pool-a", "--subresource=status",
                "--type=merge", "-p",
                R"({"status":{"nodes":["edge-node-1","edge-node-2","edge-node-3"]}})"});
  const Nodes grown = {"edge-node-1", "edge-node-2", "edge-node-3"};
  EXPECT_TRUE(wait_for_nodes(watch, "by-pool-x1", grown)) << cluster_.hub().log();
  EXPECT_TRUE(wait_for_nodes(watch, "by-zone-x1", grown));

  // by-pool becomes hostname-scoped, and an unfiltered Service becomes pool-scoped.
  patch_direct({"annotate", "service", "-n", "default", "by-pool",
                "openyurt.io/topologyKeys=kubernetes.io/hostname", "--overwrite"});
  EXPECT_TRUE(wait_for_nodes(watch, "by-pool-x1", kSelf));
  patch_direct({"annotate", "service", "-n", "default", "plain",
                "openyurt.io/topologyKeys=openyurt.io/nodepool"});
  EXPECT_TRUE(wait_for_nodes(watch, "plain-x1", grown));

  // A normal update of a slice still arrives filtered.
  patch_direct({"label", "endpointslice", "-n", "default", "by-host-x1", "touched=yes"});
  EXPECT_TRUE(wait_for_nodes(watch, "by-host-x1", kSelf));
  EXPECT_FALSE(watch.ended());
  EXPECT_GT(cluster_.metric(R"(node_yurthub_filter_corrections_total{result="event"})"), 0);
}

TEST_F(Filters, YurtHubCfgNamesMoreComponentsWithoutRestart) {
  auto before = get_as(kCilium, kSlices);
  ASSERT_EQ(before.status, 200);
  EXPECT_EQ(endpoints_by_object(before.body)["by-pool-x1"], kAll);
  auto r = cluster_.kubectl_direct(
      {"apply", "-f", "-"}, std::chrono::seconds(30),
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yurt-hub-cfg\n  namespace: kube-system\n"
      "data:\n  servicetopology: \"cilium-agent, cilium\"\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(
      cluster_.hub().wait_for_log("servicetopology=cilium,cilium-agent,", std::chrono::seconds(15)))
      << cluster_.hub().log();
  auto after = get_as(kCilium, kSlices);
  ASSERT_EQ(after.status, 200);
  EXPECT_EQ(endpoints_by_object(after.body)["by-pool-x1"], kPoolA);
}

TEST_F(Filters, PodsOfAHostNetworkPoolReachKubeletAsSent) {
  // No hostnetworkpropagation: the pod is not turned into a hostNetwork pod (OpenYurt #1935).
  const std::string target = "/api/v1/namespaces/default/pods/app-0";
  auto through_hub = kubelet_get(cluster_.proxy_port(), target);
  ASSERT_EQ(through_hub.status, 200) << through_hub.body;
  auto direct = cluster_.kubectl_direct({"get", "--raw", target});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  rapidjson::Document a, b;
  a.Parse(through_hub.body.c_str());
  b.Parse(direct.out.c_str());
  ASSERT_FALSE(a.HasParseError());
  EXPECT_TRUE(a == b) << through_hub.body << "\nvs\n" << direct.out;
  EXPECT_FALSE(a["spec"]["hostNetwork"].GetBool());
  auto list =
      kubelet_get(cluster_.proxy_port(), "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1");
  ASSERT_EQ(list.status, 200);
  EXPECT_NE(list.body.find(R"("hostNetwork":false)"), std::string::npos) << list.body;
}

// The hub's identity may not list anything: the filters' informers never sync. The hub says why
// on /v1/readyz, and a filtered request is refused with 429 and Retry-After after a bounded wait.
TEST(FiltersNotReady, ReadyzSaysWhyAndUnfilteredClientsAreNotHeldUp) {
  // Filtered requests wait (10 s) for the filters and then get 429: test/hub/proxy_test.cc checks
  // that with a short wait, so this test does not spend the 10 s.
  ClusterOptions o;
  o.seeds = {"fake_apiserver/topology-objects.json"};
  o.apiserver_flags = {"--deny-user=system:node:edge-node-1"};
  Cluster cluster(o);
  cluster.start_apiserver();
  cluster.start_hub(/*wait_ready=*/false);
  int code = 0;
  const std::string reason = cluster.admin_get("/v1/readyz", &code);
  EXPECT_NE(code, 200);
  EXPECT_NE(
      reason.find("filters waiting for the first list of: node edge-node-1 nodepools services"),
      std::string::npos)
      << reason;
  // An unfiltered client gets the apiserver's own answer (403 here) at once.
  auto k = http_request(cluster.proxy_port(), "GET", kSlices, {{"User-Agent", "kubectl/v1.32"}});
  EXPECT_EQ(k.status, 403) << k.body;
}

}  // namespace
}  // namespace yurthub::test
