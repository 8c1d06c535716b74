// The node's pods as the OTA endpoint GET /pods answers them: every pod kubelet's lists, watches
// and gets left in the node cache (upstream lists the cache's "kubelet" pods), as one v1 PodList.
// Called by ota/ota_handler.cc; reads one consistent snapshot of the store (any thread).
#pragma once

#include <string>

#include "base/result.h"
#include "cache/store.h"

namespace yurthub::ota {

// `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[...]}` with the pods of the node's
// "kubelet" object sets (not those of a caller's own credential), each once (the copy with the
// highest resourceVersion when several sets hold it), ordered by namespace and name, as stored.
std::string kubelet_pod_list(cache::Store& store);

}  // namespace yurthub::ota
