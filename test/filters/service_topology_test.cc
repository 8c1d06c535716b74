// Tests for filters/service_topology.cc: EndpointSlices (v1 nodeName, v1beta1 topology map) and
// v1 Endpoints (addresses and notReadyAddresses, emptied subsets dropped) filtered by the
// Service's topologyKeys for hostname, nodepool and zone keys; the fallbacks (unknown key, no
// annotation, Service missing, node in no pool, NodePool unknown); endpoints without a node;
// everything removed (`endpoints: []`, `subsets: []`); odd shapes kept; ready() and handles().
#include "filters/service_topology.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test/filters/filter_test_support.h"

namespace yurthub::filters {
namespace {

using test_support::ApplyCase;

// This node is edge-node-1; its pool pool-a has edge-node-1 and edge-node-3 (base_view()).
std::string service(const std::string& ns, const std::string& name, const std::string& key) {
  std::string annotations = key.empty() ? "{}" : R"({"openyurt.io/topologyKeys":")" + key + "\"}";
  return R"({"metadata":{"name":")" + name + R"(","namespace":")" + ns +
         R"(","resourceVersion":"199","annotations":)" + annotations +
         R"(},"spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":8080}],)"
         R"("selector":{"app":"web"},"clusterIP":"10.99.207.174","type":"ClusterIP"}})";
}

void with_services(ClusterView& view) {
  view.services = test_support::services_from({
      service("default", "by-host", "kubernetes.io/hostname"),
      service("default", "by-pool", "openyurt.io/nodepool"),
      service("default", "by-zone", "kubernetes.io/zone"),
      service("default", "by-other", "openyurt.io/something-else"),
      service("default", "plain", ""),
      service("kube-system", "dns", "kubernetes.io/hostname"),
      R"({"metadata":{"name":"odd","namespace":"default","annotations":"x"}})",
  });
}

// v1 endpoint (as in endpointslices-list.json); node "" means no nodeName field.
std::string ep(const std::string& ip, const std::string& node) {
  return R"({"addresses":[")" + ip +
         R"("],"conditions":{"ready":true,"serving":true,"terminating":false})" +
         (node.empty() ? "" : R"(,"nodeName":")" + node + "\"") + "}";
}

// v1beta1 endpoint carrying its node only in the deprecated topology map.
std::string beta_ep(const std::string& ip, const std::string& node) {
  return R"({"addresses":[")" + ip +
         R"("],"conditions":{"ready":true},)"
         R"("topology":{"kubernetes.io/hostname":")" +
         node + R"(","topology.kubernetes.io/zone":"z1"}})";
}

// An EndpointSlice list item; `head` is spliced in first (kind/apiVersion on watch objects).
std::string slice(const std::string& ns, const std::string& service, const std::string& endpoints,
                  const std::string& head = "") {
  std::string labels =
      R"({"endpointslice.kubernetes.io/managed-by":"endpointslice-controller)"
      R"(.k8s.io")" +
      (service.empty() ? "" : R"(,"kubernetes.io/service-name":")" + service + "\"") + "}";
  return "{" + head + R"("metadata":{"name":"web-abc12","namespace":")" + ns +
         R"(","resourceVersion":"201","labels":)" + labels +
         R"(},"addressType":"IPv4","endpoints":)" + endpoints +
         R"(,"ports":[{"name":"http","protocol":"TCP","port":8080}]})";
}

std::string svc_slice(const std::string& service, const std::string& endpoints) {
  return slice("default", service, endpoints);
}

const std::string kE1 = ep("192.0.2.11", "edge-node-1");
const std::string kE2 = ep("192.0.2.12", "edge-node-2");
const std::string kE3 = ep("192.0.2.13", "edge-node-3");
const std::string kAll = "[" + kE1 + "," + kE2 + "," + kE3 + "]";
const std::string kNode = "[" + kE1 + "]";
const std::string kPool = "[" + kE1 + "," + kE3 + "]";

void no_pool(ClusterView& v) {
  with_services(v);
  v.pool_name.clear();
  v.pool_known = false;
  v.pool_nodes.clear();
}

void pool_unknown(ClusterView& v) {
  with_services(v);
  v.pool_known = false;
  v.pool_nodes.clear();
}

TEST(ServiceTopologyFilter, EndpointSlices) {
  auto filter = make_service_topology_filter();
  const std::string kBetaHead =
      R"("kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1beta1",)";
  const std::vector<ApplyCase> cases = {
      {"hostname key", svc_slice("by-host", kAll), with_services, Verdict::Modified,
       svc_slice("by-host", kNode)},
      {"nodepool key", svc_slice("by-pool", kAll), with_services, Verdict::Modified,
       svc_slice("by-pool", kPool)},
      {"zone key (same as nodepool)", svc_slice("by-zone", kAll), with_services, Verdict::Modified,
       svc_slice("by-zone", kPool)},
      {"watch object", slice("default", "by-host", kAll, R"("kind":"EndpointSlice",)"),
       with_services, Verdict::Modified,
       slice("default", "by-host", kNode, R"("kind":"EndpointSlice",)")},
      {"unknown key", svc_slice("by-other", kAll), with_services, Verdict::Keep, ""},
      {"no annotation", svc_slice("plain", kAll), with_services, Verdict::Keep, ""},
      {"annotations not an object", svc_slice("odd", kAll), with_services, Verdict::Keep, ""},
      {"Service missing", svc_slice("ghost", kAll), with_services, Verdict::Keep, ""},
      {"no service-name label", svc_slice("", kAll), with_services, Verdict::Keep, ""},
      {"Service of that name in another namespace", slice("kube-system", "by-host", kAll),
       with_services, Verdict::Keep, ""},
      {"namespace keyed", slice("kube-system", "dns", kAll), with_services, Verdict::Modified,
       slice("kube-system", "dns", kNode)},
      {"Services not published", svc_slice("by-host", kAll),
       [](ClusterView& v) { v.services = nullptr; }, Verdict::Keep, ""},
      {"node in no pool: nodepool falls back to hostname", svc_slice("by-pool", kAll), no_pool,
       Verdict::Modified, svc_slice("by-pool", kNode)},
      {"node in no pool: zone falls back to hostname", svc_slice("by-zone", kAll), no_pool,
       Verdict::Modified, svc_slice("by-zone", kNode)},
      {"pool named but NodePool unknown", svc_slice("by-pool", kAll), pool_unknown, Verdict::Keep,
       ""},
      {"pool unknown does not affect hostname", svc_slice("by-host", kAll), pool_unknown,
       Verdict::Modified, svc_slice("by-host", kNode)},
      {"endpoint without nodeName dropped",
       svc_slice("by-host", "[" + ep("192.0.2.9", "") + "," + kE1 + "]"), with_services,
       Verdict::Modified, svc_slice("by-host", kNode)},
      {"endpoint without nodeName dropped (pool)",
       svc_slice("by-pool", "[" + kE3 + "," + ep("192.0.2.9", "") + "]"), with_services,
       Verdict::Modified, svc_slice("by-pool", "[" + kE3 + "]")},
      {"nodeName not a string or empty dropped",
       svc_slice("by-host", R"([{"addresses":["192.0.2.7"],"nodeName":7},)" + kE1 +
                                R"(,{"addresses":["192.0.2.8"],"nodeName":""}])"),
       with_services, Verdict::Modified, svc_slice("by-host", kNode)},
      {"everything removed: endpoints []", svc_slice("by-host", "[" + kE2 + "," + kE3 + "]"),
       with_services, Verdict::Modified, svc_slice("by-host", "[]")},
      {"everything removed (pool)", svc_slice("by-pool", "[" + kE2 + "]"), with_services,
       Verdict::Modified, svc_slice("by-pool", "[]")},
      {"nothing to remove (hostname)", svc_slice("by-host", kNode), with_services, Verdict::Keep,
       ""},
      {"nothing to remove (pool)", svc_slice("by-pool", kPool), with_services, Verdict::Keep, ""},
      {"already empty", svc_slice("by-host", "[]"), with_services, Verdict::Keep, ""},
      {"endpoints null", svc_slice("by-host", "null"), with_services, Verdict::Keep, ""},
      {"endpoints not an array", svc_slice("by-host", R"({"a":1})"), with_services, Verdict::Keep,
       ""},
      {"endpoint not an object", svc_slice("by-host", "[" + kE1 + R"(,"192.0.2.12"])"),
       with_services, Verdict::Keep, ""},
      {"v1beta1 topology map (pool)",
       slice("default", "by-pool",
             "[" + beta_ep("192.0.2.11", "edge-node-1") + "," +
                 beta_ep("192.0.2.12", "edge-node-2") + "," + beta_ep("192.0.2.13", "edge-node-3") +
                 "]",
             kBetaHead),
       with_services, Verdict::Modified,
       slice("default", "by-pool",
             "[" + beta_ep("192.0.2.11", "edge-node-1") + "," +
                 beta_ep("192.0.2.13", "edge-node-3") + "]",
             kBetaHead)},
      {"v1beta1: nodeName wins over topology, none of either dropped",
       svc_slice("by-host",
                 R"([{"addresses":["192.0.2.21"],"nodeName":"edge-node-2",)"
                 R"("topology":{"kubernetes.io/hostname":"edge-node-1"}},)"
                 R"({"addresses":["192.0.2.22"],"topology":{"kubernetes.io/hostname":7}},)"
                 R"({"addresses":["192.0.2.23"],"topology":"edge-node-1"},)" +
                     beta_ep("192.0.2.11", "edge-node-1") + "]"),
       with_services, Verdict::Modified,
       svc_slice("by-host", "[" + beta_ep("192.0.2.11", "edge-node-1") + "]")},
      {"metadata missing", R"({"addressType":"IPv4","endpoints":[]})", with_services, Verdict::Keep,
       ""},
      {"neither endpoints nor subsets",
       R"({"metadata":{"name":"by-host","namespace":"default"},"addressType":"IPv4"})",
       with_services, Verdict::Keep, ""},
      {"not an object", "[1,2]", with_services, Verdict::Keep, ""},
  };
  test_support::run_apply_cases(*filter, cases);
}

// A v1 Endpoints object (as in endpoints-list.body) for Service default/<name>.
std::string endpoints(const std::string& name, const std::string& subsets) {
  return R"({"metadata":{"name":")" + name +
         R"(","namespace":"default","resourceVersion":"200"},"subsets":)" + subsets + "}";
}

std::string addr(const std::string& ip, const std::string& node) {
  return R"({"ip":")" + ip + "\"" + (node.empty() ? "" : R"(,"nodeName":")" + node + "\"") +
         R"(,"targetRef":{"kind":"Pod","namespace":"default","name":"web-)" + ip.substr(8) + "\"}}";
}

// One subset; `ready` / `not_ready` are JSON arrays, "" to leave the field out.
std::string sub(const std::string& ready, const std::string& not_ready = "") {
  return "{" + (ready.empty() ? "" : R"("addresses":)" + ready + ",") +
         (not_ready.empty() ? "" : R"("notReadyAddresses":)" + not_ready + ",") +
         R"("ports":[{"name":"http","port":8080,"protocol":"TCP"}]})";
}

const std::string kA1 = addr("192.0.2.11", "edge-node-1");
const std::string kA2 = addr("192.0.2.12", "edge-node-2");
const std::string kA3 = addr("192.0.2.13", "edge-node-3");
const std::string kA4 = addr("192.0.2.14", "edge-node-1");

TEST(ServiceTopologyFilter, Endpoints) {
  auto filter = make_service_topology_filter();
  const std::string kOnly2 = "[" + sub("[" + kA2 + "]") + "]";
  const std::vector<ApplyCase> cases = {
      {"addresses and notReadyAddresses filtered",
       endpoints("by-host",
                 "[" + sub("[" + kA1 + "," + kA2 + "]", "[" + kA3 + "," + kA4 + "]") + "]"),
       with_services, Verdict::Modified,
       endpoints("by-host", "[" + sub("[" + kA1 + "]", "[" + kA4 + "]") + "]")},
      {"emptied subset dropped, subset with only notReady left kept",
       endpoints("by-host",
                 "[" + sub("[" + kA2 + "]") + "," + sub("[" + kA3 + "]", "[" + kA1 + "]") + "]"),
       with_services, Verdict::Modified,
       endpoints("by-host", "[" + sub("[]", "[" + kA1 + "]") + "]")},
      {"pool", endpoints("by-pool", "[" + sub("[" + kA1 + "," + kA2 + "," + kA3 + "]") + "]"),
       with_services, Verdict::Modified,
       endpoints("by-pool", "[" + sub("[" + kA1 + "," + kA3 + "]") + "]")},
      {"nothing left: subsets []",
       endpoints("by-host", "[" + sub("[" + kA2 + "]") + "," + sub("", "[" + kA3 + "]") + "]"),
       with_services, Verdict::Modified, endpoints("by-host", "[]")},
      {"address without nodeName dropped",
       endpoints("by-host", "[" + sub("[" + addr("192.0.2.19", "") + "," + kA1 + "]") + "]"),
       with_services, Verdict::Modified, endpoints("by-host", "[" + sub("[" + kA1 + "]") + "]")},
      {"nothing to remove", endpoints("by-host", "[" + sub("[" + kA1 + "]") + "]"), with_services,
       Verdict::Keep, ""},
      {"no annotation", endpoints("plain", kOnly2), with_services, Verdict::Keep, ""},
      {"Service missing", endpoints("ghost", kOnly2), with_services, Verdict::Keep, ""},
      {"pool named but NodePool unknown", endpoints("by-pool", kOnly2), pool_unknown, Verdict::Keep,
       ""},
      {"subsets null", endpoints("by-host", "null"), with_services, Verdict::Keep, ""},
      {"subsets not an array", endpoints("by-host", "{}"), with_services, Verdict::Keep, ""},
      {"subset not an object", endpoints("by-host", "[" + sub("[" + kA2 + "]") + ",3]"),
       with_services, Verdict::Keep, ""},
      {"addresses not an array", endpoints("by-host", "[" + sub(R"("192.0.2.12")") + "]"),
       with_services, Verdict::Keep, ""},
      {"address not an object", endpoints("by-host", "[" + sub("[" + kA2 + ",\"x\"]") + "]"),
       with_services, Verdict::Keep, ""},
  };
  test_support::run_apply_cases(*filter, cases);
}

TEST(ServiceTopologyFilter, ReadyNeedsServicesNodeAndPools) {
  auto filter = make_service_topology_filter();
  EXPECT_TRUE(filter->reactive());
  EXPECT_EQ(filter->name(), "servicetopology");
  EXPECT_TRUE(filter->ready(test_support::base_view()));
  EXPECT_FALSE(filter->ready(ClusterView{}));
  for (bool ClusterView::*flag :
       {&ClusterView::services_synced, &ClusterView::node_synced, &ClusterView::pools_synced}) {
    ClusterView view = test_support::base_view();
    view.*flag = false;
    EXPECT_FALSE(filter->ready(view));
  }
}

TEST(ServiceTopologyFilter, Handles) {
  auto filter = make_service_topology_filter();
  test_support::expect_handles(
      *filter,
      {
          {"GET", "/apis/discovery.k8s.io/v1/endpointslices", true},
          {"GET", "/apis/discovery.k8s.io/v1/endpointslices?watch=true", true},
          {"GET", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", true},
          {"GET", "/apis/discovery.k8s.io/v1beta1/endpointslices?watch=1", true},
          {"GET", "/api/v1/endpoints", true},
          {"GET", "/api/v1/watch/namespaces/default/endpoints", true},
          {"GET", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/web-abc12", false},
          {"GET", "/api/v1/namespaces/default/endpoints/web", false},
          {"GET", "/apis/discovery.k8s.io/v1alpha1/endpointslices", false},
          {"GET", "/apis/example.com/v1/endpointslices", false},
          {"GET", "/api/v1/endpointslices", false},
          {"GET", "/apis/discovery.k8s.io/v1/endpoints", false},
          {"GET", "/api/v1/services", false},
          {"POST", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", false},
      });
}

}  // namespace
}  // namespace yurthub::filters
