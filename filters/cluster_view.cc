// ClusterView building and change detection; see cluster_view.h.
#include "filters/cluster_view.h"

#include "filters/object_access.h"

namespace yurthub::filters {

namespace {

std::string topology_of(const rapidjson::Value& service) {
  return std::string(annotation(service, kTopologyKeysAnnotation).value_or(""));
}

}  // namespace

ClusterView build_cluster_view(const ViewInputs& in) {
  ClusterView view;
  view.node_name = in.node_name;
  view.hub_host = in.hub_host;
  view.hub_port = in.hub_port;
  view.node_synced = in.node_synced;
  view.pools_synced = in.pools_synced;
  view.services_synced = in.services_synced;
  view.services = in.services ? in.services : std::make_shared<const net::ObjectMap>();

  view.pool_name = in.nodepool_flag;
  if (view.pool_name.empty() && in.node) {
    if (auto it = in.node->find(in.node_name); it != in.node->end()) {
      view.pool_name = std::string(label(*it->second, kNodePoolLabel).value_or(""));
    }
  }
  if (!view.pool_name.empty() && in.pools) {
    if (auto it = in.pools->find(view.pool_name); it != in.pools->end()) {
      view.pool_known = true;
      const rapidjson::Value* status = find_member(*it->second, "status");
      const rapidjson::Value* nodes = status ? find_member(*status, "nodes") : nullptr;
      if (nodes && nodes->IsArray()) {
        for (const auto& n : nodes->GetArray()) {
          if (n.IsString()) view.pool_nodes.emplace(n.GetString(), n.GetStringLength());
        }
      }
    }
  }
  return view;
}

bool topology_changed(const ClusterView& before, const ClusterView& after) {
  if (before.pool_name != after.pool_name || before.pool_known != after.pool_known ||
      before.pool_nodes != after.pool_nodes || before.node_synced != after.node_synced ||
      before.pools_synced != after.pools_synced ||
      before.services_synced != after.services_synced) {
    return true;
  }
  if (before.services == after.services) return false;
  // Services present in only one view matter only if they carry the annotation.
  const net::ObjectMap& a = *before.services;
  const net::ObjectMap& b = *after.services;
  for (const auto& [key, service] : a) {
    auto it = b.find(key);
    const std::string now = it == b.end() ? std::string() : topology_of(*it->second);
    if (topology_of(*service) != now) return true;
  }
  for (const auto& [key, service] : b) {
    if (a.count(key) == 0 && !topology_of(*service).empty()) return true;
  }
  return false;
}

}  // namespace yurthub::filters
