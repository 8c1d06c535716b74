// nodeportisolation: hides NodePort/LoadBalancer Services from kube-proxy on nodes whose pool is
// not listed in the Service's `nodeport.openyurt.io/listen` annotation, so their node ports are
// not opened there (docs/reference/yurthub.md §6.7). Created by the FilterChain's table in
// filters/registry.cc.
#pragma once

#include <memory>

#include "filters/filter.h"

namespace yurthub::filters {

// "nodeportisolation": core v1 services, list and watch. The annotation is a comma list of pool
// names: `<pool>` keeps, `-<pool>` drops, `*` keeps every other pool; an unlisted pool drops.
// A node in no pool keeps everything. Always ready. Stateless; thread-safe.
std::unique_ptr<ObjectFilter> make_node_port_isolation_filter();

}  // namespace yurthub::filters
