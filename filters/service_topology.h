// servicetopology: keeps only the endpoints on this node or in this node's pool, as chosen by the
// Service's `openyurt.io/topologyKeys` annotation, in the EndpointSlices and Endpoints that
// kube-proxy, CoreDNS and ingress controllers list and watch (docs/reference/yurthub.md §6.5).
// Created by the FilterChain's table in filters/registry.cc.
#pragma once

#include <memory>

#include "filters/filter.h"

namespace yurthub::filters {

// "servicetopology": discovery.k8s.io v1/v1beta1 endpointslices and core v1 endpoints, list and
// watch. Reactive (the result depends on Services and pool membership). Ready once Services, the
// node and NodePools are synced. Never drops a whole object: a slice left with no endpoints is
// sent with `endpoints: []`. Stateless; thread-safe.
std::unique_ptr<ObjectFilter> make_service_topology_filter();

}  // namespace yurthub::filters
