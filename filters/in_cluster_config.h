// inclusterconfig: comments out `kubeconfig:` in the kube-system/kube-proxy ConfigMap so that
// kube-proxy falls back to InClusterConfig and reaches the apiserver through this hub
// (docs/reference/yurthub.md §6.6). Created by the FilterChain's table in filters/registry.cc.
#pragma once

#include <memory>

#include "filters/filter.h"

namespace yurthub::filters {

// "inclusterconfig": core v1 configmaps, get, list and watch. In data["config.conf"] of ConfigMap
// kube-system/kube-proxy, every `kubeconfig: <path>` line becomes `#kubeconfig: <path>`
// (indentation kept). Always ready. Stateless; thread-safe.
std::unique_ptr<ObjectFilter> make_in_cluster_config_filter();

}  // namespace yurthub::filters
