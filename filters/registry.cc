// The built-in filter table; see registry.h.
//
// Chain order is fixed: filters that drop whole objects run first (no work is spent on an object
// the client will not see), then the ones that rewrite objects. forwardkubesvctraffic runs after
// servicetopology so the kubernetes EndpointSlice it rewrites is final. There is deliberately no
// hostnetworkpropagation filter (docs/filters.md).
#include "filters/registry.h"

#include "filters/discard_cloud_service.h"
#include "filters/forward_kube_svc_traffic.h"
#include "filters/in_cluster_config.h"
#include "filters/master_service.h"
#include "filters/node_port_isolation.h"
#include "filters/service_env_updater.h"
#include "filters/service_topology.h"

namespace yurthub::filters {

namespace {

std::vector<RegisteredFilter> build() {
  std::vector<RegisteredFilter> table;
  auto add = [&](std::unique_ptr<ObjectFilter> f, std::vector<std::string> components,
                 bool edge_only) {
    table.push_back(RegisteredFilter{std::move(f), std::move(components), edge_only});
  };
  add(make_discard_cloud_service_filter(), {"kube-proxy"}, true);
  add(make_node_port_isolation_filter(), {"kube-proxy"}, false);
  add(make_master_service_filter(), {"kubelet"}, false);
  add(make_service_topology_filter(), {"kube-proxy", "coredns", "nginx-ingress-controller"}, false);
  add(make_forward_kube_svc_traffic_filter(), {"kube-proxy"}, true);
  add(make_in_cluster_config_filter(), {"kubelet"}, false);
  add(make_service_env_updater_filter(), {"kubelet"}, true);
  return table;
}

}  // namespace

const std::vector<RegisteredFilter>& registered_filters() {
  static const std::vector<RegisteredFilter> table = build();
  return table;
}

}  // namespace yurthub::filters
