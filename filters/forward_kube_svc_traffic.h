// forwardkubesvctraffic: points the `kubernetes` Service's EndpointSlice at this hub, so the
// ClusterIP traffic that kube-proxy programs for pods talking to the apiserver lands on the hub
// (docs/reference/yurthub.md §6.8). Created by the FilterChain's table in filters/registry.cc.
#pragma once

#include <memory>

#include "filters/filter.h"

namespace yurthub::filters {

// "forwardkubesvctraffic": discovery.k8s.io v1 endpointslices, list and watch. The EndpointSlice
// in `default` labelled `kubernetes.io/service-name: kubernetes`, whose addressType is the hub
// host's family (IPv6 when hub_host contains ':', else IPv4), gets its "https" port = hub_port and
// exactly one endpoint {addresses: [hub_host], conditions: {ready: true}}. Ready once hub_host is
// known. Stateless; thread-safe.
std::unique_ptr<ObjectFilter> make_forward_kube_svc_traffic_filter();

}  // namespace yurthub::filters
