// serviceenvupdater: rewrites the KUBERNETES_SERVICE_HOST/PORT env entries that a Pod spec sets
// explicitly, so those containers also reach the apiserver through this hub
// (docs/reference/yurthub.md §6.8). Created by the FilterChain's table in filters/registry.cc.
#pragma once

#include <memory>

#include "filters/filter.h"

namespace yurthub::filters {

// "serviceenvupdater": core v1 pods, get, list and watch. In spec.containers (not
// initContainers), env entries named KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT get value
// hub_host / hub_port; entries are never added. Ready once hub_host is known. Stateless;
// thread-safe.
std::unique_ptr<ObjectFilter> make_service_env_updater_filter();

}  // namespace yurthub::filters
