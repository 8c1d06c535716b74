// The node label guard; see node_label_guard.h.
#include "admission/node_label_guard.h"

#include <optional>

#include "admission/pod_affinity.h"
#include "base/json_member.h"

namespace yurthub::admission {
namespace {

// The label's value on `node`; nullopt when the node does not carry it.
std::optional<std::string> label_of(const rapidjson::Value& node) {
  const rapidjson::Value* metadata = base::find_member(node, "metadata");
  const rapidjson::Value* labels = metadata ? base::find_member(*metadata, "labels") : nullptr;
  const rapidjson::Value* value = labels ? base::find_member(*labels, kHostNetworkLabel) : nullptr;
  if (!value || !value->IsString()) return std::nullopt;
  return std::string(value->GetString(), value->GetStringLength());
}

}  // namespace

AdmissionResponse check_node_label_change(const AdmissionRequest& request,
                                          std::string_view labeller_username) {
  if (request.kind != "Node" || request.operation != "UPDATE" || !request.object.IsObject() ||
      !request.old_object.IsObject()) {
    return {};
  }
  if (label_of(request.object) == label_of(request.old_object)) return {};
  if (request.username == labeller_username) return {};
  AdmissionResponse refused;
  refused.allowed = false;
  refused.code = 403;
  refused.reason = "Forbidden";
  refused.message = "nodes \"" + request.name + "\" is forbidden: the label " +
                    std::string(kHostNetworkLabel) +
                    " follows the node's NodePool (spec.hostNetwork) and is set by "
                    "pool-admission's node labeller (" +
                    std::string(labeller_username) + ") only, not by " + request.username;
  return refused;
}

}  // namespace yurthub::admission
