// discardcloudservice: hides cloud-only Services from kube-proxy on edge nodes
// (docs/reference/yurthub.md §6.4). Created by the FilterChain's table in filters/registry.cc.
#pragma once

#include <memory>

#include "filters/filter.h"

namespace yurthub::filters {

// "discardcloudservice": core v1 services, list and watch. Drops a LoadBalancer Service annotated
// `svc.openyurt.io/discard: "true"`, and kube-system/x-tunnel-server-internal-svc. Always ready.
// Stateless; thread-safe.
std::unique_ptr<ObjectFilter> make_discard_cloud_service_filter();

}  // namespace yurthub::filters
