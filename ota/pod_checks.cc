// Pod checks and the image pre-pull patch of the OTA endpoints; see pod_checks.h.
#include "ota/pod_checks.h"

#include "base/json_member.h"
#include "base/json_parse.h"

namespace yurthub::ota {
namespace {

using base::find_member;
using base::string_member;

// status.conditions, or nullptr when the pod has none (or they are not an array).
const rapidjson::Value* conditions(const rapidjson::Value& pod) {
  const rapidjson::Value* status = find_member(pod, "status");
  const rapidjson::Value* list = status ? find_member(*status, "conditions") : nullptr;
  return list && list->IsArray() ? list : nullptr;
}

// The first condition of `type` (as podutil.GetPodCondition), or nullptr.
const rapidjson::Value* condition(const rapidjson::Value& pod, std::string_view type) {
  const rapidjson::Value* list = conditions(pod);
  if (!list) return nullptr;
  for (const auto& c : list->GetArray()) {
    if (string_member(c, "type") == type) return &c;
  }
  return nullptr;
}

std::string pod_ref(const rapidjson::Value& pod) {
  const rapidjson::Value* metadata = find_member(pod, "metadata");
  if (!metadata) return "/";
  return string_member(*metadata, "namespace") + "/" + string_member(*metadata, "name");
}

std::string trim_prefix(std::string text, std::string_view prefix) {
  if (text.starts_with(prefix)) text.erase(0, prefix.size());
  return text;
}

}  // namespace

std::optional<std::string> pod_status_problem(const rapidjson::Value& pod,
                                              std::string_view node_name) {
  const rapidjson::Value* metadata = find_member(pod, "metadata");
  const rapidjson::Value* deletion =
      metadata ? find_member(*metadata, "deletionTimestamp") : nullptr;
  if (deletion && !deletion->IsNull()) {
    return "Pod " + pod_ref(pod) + " is deleting, can not be updated";
  }
  const rapidjson::Value* spec = find_member(pod, "spec");
  const std::string pod_node = spec ? string_member(*spec, "nodeName") : "";
  if (pod_node != node_name) {
    return "Pod: " + pod_ref(pod) + " is running on " + pod_node + ", can not be updated";
  }
  const rapidjson::Value* need_upgrade = condition(pod, kPodNeedUpgrade);
  if (!need_upgrade || string_member(*need_upgrade, "status") != "True") {
    return "Pod: " + pod_ref(pod) + " update status is False, can not be updated";
  }
  return std::nullopt;
}

std::optional<std::string> image_ready_problem(const rapidjson::Value& pod) {
  const rapidjson::Value* ready = condition(pod, kPodImageReady);
  if (!ready) return std::nullopt;
  const std::string message = string_member(*ready, "message");
  if (string_member(*ready, "status") == "True" &&
      trim_prefix(message, kVersionPrefix) == next_hash_version(pod)) {
    return std::nullopt;
  }
  return "Pod: " + pod_ref(pod) +
         " image is not ready, reason: " + string_member(*ready, "reason") +
         ", message: " + message;
}

std::string next_hash_version(const rapidjson::Value& pod) {
  const rapidjson::Value* need_upgrade = condition(pod, kPodNeedUpgrade);
  return need_upgrade ? trim_prefix(string_member(*need_upgrade, "message"), kVersionPrefix) : "";
}

std::optional<std::string> first_owner_kind(const rapidjson::Value& pod) {
  const rapidjson::Value* metadata = find_member(pod, "metadata");
  const rapidjson::Value* owners = metadata ? find_member(*metadata, "ownerReferences") : nullptr;
  if (!owners || !owners->IsArray() || owners->Empty()) return std::nullopt;
  return string_member((*owners)[0], "kind");
}

std::optional<std::string> static_set_name(std::string_view pod_name, std::string_view node_name) {
  const std::string suffix = "-" + std::string(node_name);
  if (!pod_name.ends_with(suffix)) return std::nullopt;
  // strings.Split(podname, "-"+nodename)[0]
  return std::string(pod_name.substr(0, pod_name.find(suffix)));
}

std::string image_pull_patch(const rapidjson::Value& pod, std::string_view now) {
  rapidjson::Document patch(rapidjson::kObjectType);
  auto& alloc = patch.GetAllocator();
  rapidjson::Value list(rapidjson::kArrayType);
  if (const rapidjson::Value* existing = conditions(pod)) list.CopyFrom(*existing, alloc);

  rapidjson::Value updated(rapidjson::kObjectType);
  updated.AddMember("type", rapidjson::Value(kPodImageReady.data(), kPodImageReady.size(), alloc),
                    alloc);
  updated.AddMember("status", "False", alloc);
  updated.AddMember("lastProbeTime", rapidjson::Value(rapidjson::kNullType), alloc);
  rapidjson::Value transition(now.data(), static_cast<rapidjson::SizeType>(now.size()), alloc);
  rapidjson::Value* old = nullptr;
  for (auto& c : list.GetArray()) {
    if (string_member(c, "type") == kPodImageReady) {
      old = &c;
      break;
    }
  }
  if (old && string_member(*old, "status") == "False") {
    auto kept = old->FindMember("lastTransitionTime");
    transition = kept != old->MemberEnd() ? rapidjson::Value(kept->value, alloc)
                                          : rapidjson::Value(rapidjson::kNullType);
  }
  updated.AddMember("lastTransitionTime", transition, alloc);
  const std::string message = std::string(kVersionPrefix) + next_hash_version(pod);
  // With its length: a NUL the apiserver's JSON escaped (\u0000) must not cut the message short.
  updated.AddMember(
      "message",
      rapidjson::Value(message.data(), static_cast<rapidjson::SizeType>(message.size()), alloc),
      alloc);
  if (old) {
    *old = updated;  // the whole condition, as UpdatePodCondition: its reason goes
  } else {
    list.PushBack(updated, alloc);
  }

  rapidjson::Value status(rapidjson::kObjectType);
  status.AddMember("conditions", list, alloc);
  patch.AddMember("status", status, alloc);
  return base::to_json(patch);
}

}  // namespace yurthub::ota
