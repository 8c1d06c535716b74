// Building the ClusterView (filter.h) from the FilterManager's informer snapshots, and telling
// whether a new view changes what reactive filters (servicetopology) decide, so open watches are
// corrected only when something they depend on moved. Pure functions; called on the hub's first
// worker thread by the FilterManager.
#pragma once

#include <string>

#include "filters/filter.h"
#include "net/informer.h"

namespace yurthub::filters {

struct ViewInputs {
  std::string node_name;      // --node-name
  std::string nodepool_flag;  // --nodepool-name (wins over the node's label)
  std::string hub_host;       // where in-cluster clients reach the hub ("" = unknown)
  unsigned short hub_port = 10268;
  net::ObjectSnapshot node;  // the informer of this node (at most one object), or null
  // NodePools from apps.openyurt.io/v1beta2, or v1beta1 when v1beta2 is not served.
  net::ObjectSnapshot pools;
  net::ObjectSnapshot services;
  bool node_synced = false;
  bool pools_synced = false;
  bool services_synced = false;
};

// The label yurt-manager sets on a node to its pool's name.
inline constexpr const char* kNodePoolLabel = "apps.openyurt.io/nodepool";
// The Service annotation servicetopology reads.
inline constexpr const char* kTopologyKeysAnnotation = "openyurt.io/topologyKeys";

ClusterView build_cluster_view(const ViewInputs& inputs);

// Whether a reactive filter could decide differently under `after` than under `before`: this
// node's pool or its members changed, or some Service's topology annotation did, or an input
// finished syncing.
bool topology_changed(const ClusterView& before, const ClusterView& after);

}  // namespace yurthub::filters
