// The node's cached pods as a PodList; see node_pods.h.
#include "ota/node_pods.h"

#include <map>
#include <utility>

#include "cache/list_identity.h"

namespace yurthub::ota {

std::string kubelet_pod_list(cache::Store& store) {
  const std::unique_ptr<cache::ReadView> view = store.read();
  // (namespace, name) -> the newest copy, whose JSON stays valid while `view` lives.
  std::map<std::pair<std::string, std::string>, cache::StoredObject> pods;
  const std::string prefix = cache::ListIdentity::resource_prefix("kubelet", "", "v1", "pods");
  for (const auto& [key, record] : view->lists_with_prefix(prefix)) {
    if (record.set_id == 0) continue;
    view->scan(record.set_id, "", "", "",
               [&](std::string_view namespace_name, std::string_view name,
                   const cache::StoredObject& object) {
                 auto [it, added] =
                     pods.try_emplace({std::string(namespace_name), std::string(name)}, object);
                 if (!added && object.resource_version > it->second.resource_version) {
                   it->second = object;
                 }
                 return true;
               });
  }
  std::string out = R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":[)";
  bool first = true;
  for (const auto& [key, object] : pods) {
    if (!first) out += ',';
    first = false;
    out += object.json;
  }
  out += "]}";
  return out;
}

}  // namespace yurthub::ota
