// FilterAssignment (defaults, yurt-hub-cfg keys, flags) and the ClusterView built from the
// informers' snapshots, with the change detection that triggers watch corrections.
#include "filters/filter_config.h"

#include <gtest/gtest.h>

#include "filters/cluster_view.h"
#include "test/filters/filter_test_support.h"

namespace yurthub::filters {
namespace {

std::vector<std::string> names(const std::vector<const ObjectFilter*>& filters) {
  std::vector<std::string> out;
  for (const auto* f : filters) out.emplace_back(f->name());
  return out;
}

using Names = std::vector<std::string>;

TEST(FilterAssignment, DefaultsInChainOrder) {
  const auto a = FilterAssignment::build({}, {});
  EXPECT_EQ(names(a.for_component("kube-proxy")),
            (Names{"discardcloudservice", "nodeportisolation", "servicetopology",
                   "forwardkubesvctraffic"}));
  EXPECT_EQ(names(a.for_component("kubelet")),
            (Names{"masterservice", "inclusterconfig", "serviceenvupdater"}));
  EXPECT_EQ(names(a.for_component("coredns")), (Names{"servicetopology"}));
  EXPECT_EQ(names(a.for_component("nginx-ingress-controller")), (Names{"servicetopology"}));
  EXPECT_TRUE(a.for_component("cilium-agent").empty());
  EXPECT_TRUE(a.for_component("yurthub").empty());
  EXPECT_TRUE(a.for_component("").empty());
}

TEST(FilterAssignment, ForRequestKeepsTheAssignedFiltersThatHandleIt) {
  const auto a = FilterAssignment::build({}, {});
  const auto slices = kube::classify_request(
      "GET", "/apis/discovery.k8s.io/v1/endpointslices?watch=true", "kube-proxy/v1.26.0");
  EXPECT_EQ(names(a.for_request(slices)), (Names{"servicetopology", "forwardkubesvctraffic"}));
  const auto services = kube::classify_request("GET", "/api/v1/services", "kube-proxy/v1.26.0");
  EXPECT_EQ(names(a.for_request(services)), (Names{"discardcloudservice", "nodeportisolation"}));
  // Handled by servicetopology, which is not assigned to kubelet.
  const auto kubelet_slices =
      kube::classify_request("GET", "/apis/discovery.k8s.io/v1/endpointslices", "kubelet/v1.26.0");
  EXPECT_TRUE(a.for_request(kubelet_slices).empty());
  const auto pod =
      kube::classify_request("GET", "/api/v1/namespaces/default/pods/web-0", "kube-proxy/v1.26.0");
  EXPECT_TRUE(a.for_request(pod).empty());
}

TEST(FilterAssignment, ConfigMapKeysAddComponentsIncludingTheLegacyPrefix) {
  const auto a = FilterAssignment::build({}, {{"servicetopology", " Cilium-Agent/v1.16, my-ctrl "},
                                              {"filter_masterservice", "cilium-agent"},
                                              {"cache_agents", "cilium-agent"},
                                              {"yurthub", "ignored"}});
  EXPECT_EQ(names(a.for_component("cilium-agent")), (Names{"masterservice", "servicetopology"}));
  EXPECT_EQ(names(a.for_component("my-ctrl")), (Names{"servicetopology"}));
  EXPECT_EQ(names(a.for_component("kube-proxy")).size(), 4u) << "defaults stay";
}

TEST(FilterAssignment, FlagsDisableFilters) {
  FilterFlags off;
  off.enabled = false;
  EXPECT_TRUE(FilterAssignment::build(off, {}).for_component("kube-proxy").empty());
  FilterFlags star;
  star.disabled = {"*"};
  EXPECT_EQ(FilterAssignment::build(star, {}).describe(), "none");
  FilterFlags some;
  some.disabled = {"servicetopology", "masterservice"};
  const auto a = FilterAssignment::build(some, {{"servicetopology", "coredns"}});
  EXPECT_TRUE(a.for_component("coredns").empty());
  EXPECT_EQ(names(a.for_component("kubelet")), (Names{"inclusterconfig", "serviceenvupdater"}));
  FilterFlags cloud;
  cloud.cloud_mode = true;
  EXPECT_EQ(names(FilterAssignment::build(cloud, {}).for_component("kube-proxy")),
            (Names{"nodeportisolation", "servicetopology"}));
}

TEST(FilterAssignment, ComponentListParsing) {
  EXPECT_EQ(parse_component_list("a, B/v1 ,,c/x/y, "), (std::set<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(parse_component_list("").empty());
}

net::ObjectSnapshot snapshot(std::vector<std::pair<std::string, std::string>> objects) {
  auto map = std::make_shared<net::ObjectMap>();
  for (auto& [key, json] : objects) {
    auto doc = std::make_shared<rapidjson::Document>();
    doc->Parse(json.c_str());
    (*map)[key] = doc;
  }
  return map;
}

TEST(ClusterViewBuild, PoolFromTheNodeLabelOrTheFlagWithItsMembers) {
  ViewInputs in;
  in.node_name = "n1";
  in.node = snapshot(
      {{"n1", R"({"metadata":{"name":"n1","labels":{"apps.openyurt.io/nodepool":"pa"}}})"}});
  in.pools = snapshot({{"pa", R"({"metadata":{"name":"pa"},"status":{"nodes":["n1","n2",7]}})"},
                       {"pb", R"({"metadata":{"name":"pb"},"status":{"nodes":["n3"]}})"}});
  auto v = build_cluster_view(in);
  EXPECT_EQ(v.pool_name, "pa");
  EXPECT_TRUE(v.pool_known);
  EXPECT_EQ(v.pool_nodes, (std::set<std::string>{"n1", "n2"}));
  in.nodepool_flag = "pb";
  v = build_cluster_view(in);
  EXPECT_EQ(v.pool_nodes, (std::set<std::string>{"n3"}));
  in.nodepool_flag = "nowhere";
  v = build_cluster_view(in);
  EXPECT_FALSE(v.pool_known);
  EXPECT_TRUE(v.pool_nodes.empty());
  in.nodepool_flag.clear();
  in.node = snapshot({{"n1", R"({"metadata":{"name":"n1"}})"}});
  v = build_cluster_view(in);
  EXPECT_EQ(v.pool_name, "");
  EXPECT_NE(v.services, nullptr);
}

TEST(ClusterViewChange, OnlyWhatReactiveFiltersReadCounts) {
  ViewInputs in;
  in.node_name = "n1";
  in.node_synced = in.pools_synced = in.services_synced = true;
  in.services = snapshot(
      {{"d/web",
        R"({"metadata":{"annotations":{"openyurt.io/topologyKeys":"openyurt.io/nodepool"}}})"},
       {"d/plain", R"({"metadata":{}})"}});
  const auto before = build_cluster_view(in);
  EXPECT_FALSE(topology_changed(before, before));
  in.services = snapshot(
      {{"d/web",
        R"({"metadata":{"annotations":{"openyurt.io/topologyKeys":"openyurt.io/nodepool"}},"spec":{"x":1}})"},
       {"d/plain", R"({"metadata":{"labels":{"a":"b"}}})"},
       {"d/new", R"({"metadata":{}})"}});
  EXPECT_FALSE(topology_changed(before, build_cluster_view(in))) << "no annotation changed";
  in.services = snapshot(
      {{"d/web",
        R"({"metadata":{"annotations":{"openyurt.io/topologyKeys":"kubernetes.io/hostname"}}})"}});
  EXPECT_TRUE(topology_changed(before, build_cluster_view(in)));
  in.services = snapshot({{"d/plain", R"({"metadata":{}})"}});
  EXPECT_TRUE(topology_changed(before, build_cluster_view(in))) << "annotated service deleted";
  in.services = before.services;
  in.nodepool_flag = "p";
  EXPECT_TRUE(topology_changed(before, build_cluster_view(in)));
}

}  // namespace
}  // namespace yurthub::filters
