// masterservice: rewrites the `default/kubernetes` Service in kubelet's service lists and watches
// so that the KUBERNETES_SERVICE_HOST/PORT kubelet gives pods point at this hub
// (docs/reference/yurthub.md §6.3). Created by the FilterChain's table in filters/registry.cc.
#pragma once

#include <memory>

#include "filters/filter.h"

namespace yurthub::filters {

// "masterservice": core v1 services, list and watch. Service default/kubernetes gets
// spec.clusterIP = spec.clusterIPs[0] = view.hub_host and its "https" port = view.hub_port.
// Ready once hub_host is known. Stateless; thread-safe.
std::unique_ptr<ObjectFilter> make_master_service_filter();

}  // namespace yurthub::filters
