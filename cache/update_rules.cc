// Immutable fields of offline updates; see update_rules.h. The texts are kube-apiserver v1.26's:
// staging/src/k8s.io/apiserver/pkg/registry/rest/update.go (BeforeUpdate) and
// pkg/apis/core/validation/validation.go (ValidatePodUpdate, ValidateNodeUpdate).
#include "cache/update_rules.h"

namespace yurthub::cache {
namespace {

using rapidjson::Document;
using rapidjson::Value;

const Value* member(const Value* object, const char* name) {
  if (object == nullptr || !object->IsObject()) return nullptr;
  auto it = object->FindMember(name);
  return it == object->MemberEnd() || it->value.IsNull() ? nullptr : &it->value;
}

bool empty(const Value* v) {
  return v == nullptr || (v->IsString() && v->GetStringLength() == 0) ||
         (v->IsArray() && v->Empty()) || (v->IsObject() && v->MemberCount() == 0);
}

// Absent, null and empty compare equal, as Go's zero values do after decoding.
bool same(const Value* a, const Value* b) {
  if (empty(a) || empty(b)) return empty(a) == empty(b);
  return *a == *b;
}

// Replaces (or with null `from`, removes) object[name] by a copy of `from`.
void set_copy(Value& object, const char* name, const Value* from, Document::AllocatorType& a) {
  object.RemoveMember(name);
  if (from != nullptr) object.AddMember(Value(name, a), Value(*from, a), a);
}

std::string invalid(const char* kind, const kube::RequestInfo& info, const std::string& field,
                    const std::string& why) {
  return std::string(kind) + " \"" + info.name + "\" is invalid: " + field + ": Forbidden: " + why;
}

std::string forbidden_pod_change(const kube::RequestInfo& info) {
  return invalid("Pod", info, "spec",
                 "pod updates may not change fields other than `spec.containers[*].image`, "
                 "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, "
                 "`spec.tolerations` (only additions to existing tolerations) or "
                 "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
                 "previously negative)");
}

// ValidatePodUpdate: a copy of the new spec with what may change set back to the old values must
// equal the old spec.
std::optional<std::string> pod_change(const kube::RequestInfo& info, const Value& stored,
                                      const Value& updated) {
  const Value* old_spec = member(&stored, "spec");
  const Value* new_spec = member(&updated, "spec");
  if (old_spec == nullptr || new_spec == nullptr) return std::nullopt;
  if (!old_spec->IsObject() || !new_spec->IsObject()) {  // nothing in it may change then
    if (*new_spec == *old_spec) return std::nullopt;
    return forbidden_pod_change(info);
  }
  Document munged;
  munged.CopyFrom(*new_spec, munged.GetAllocator());
  auto& a = munged.GetAllocator();
  for (const char* list : {"containers", "initContainers"}) {
    const Value* olds = member(old_spec, list);
    auto news = munged.FindMember(list);
    if (olds == nullptr || !olds->IsArray() || news == munged.MemberEnd() ||
        !news->value.IsArray() || news->value.Size() != olds->Size()) {
      continue;  // a different number of containers stays different
    }
    for (rapidjson::SizeType i = 0; i < olds->Size(); ++i) {
      if (news->value[i].IsObject())
        set_copy(news->value[i], "image", member(&(*olds)[i], "image"), a);
    }
  }
  set_copy(munged, "activeDeadlineSeconds", member(old_spec, "activeDeadlineSeconds"), a);
  set_copy(munged, "tolerations", member(old_spec, "tolerations"), a);
  const Value* old_grace = member(old_spec, "terminationGracePeriodSeconds");
  const Value* new_grace = member(new_spec, "terminationGracePeriodSeconds");
  if (old_grace && old_grace->IsInt64() && old_grace->GetInt64() < 0 && new_grace &&
      new_grace->IsInt64() && new_grace->GetInt64() == 1) {
    set_copy(munged, "terminationGracePeriodSeconds", old_grace, a);
  }
  if (munged == *old_spec) return std::nullopt;
  return forbidden_pod_change(info);
}

// ValidateNodeUpdate: podCIDRs and providerID may be set once, never changed.
std::optional<std::string> node_change(const kube::RequestInfo& info, const Value& stored,
                                       const Value& updated) {
  const Value* old_spec = member(&stored, "spec");
  const Value* new_spec = member(&updated, "spec");
  const Value* old_cidrs = member(old_spec, "podCIDRs");
  if (!empty(old_cidrs) && !same(old_cidrs, member(new_spec, "podCIDRs"))) {
    return invalid("Node", info, "spec.podCIDRs",
                   "node updates may not change podCIDR except from \"\" to valid");
  }
  const Value* old_provider = member(old_spec, "providerID");
  if (!empty(old_provider) && !same(old_provider, member(new_spec, "providerID"))) {
    return invalid("Node", info, "spec.providerID",
                   "node updates may not change providerID except from \"\" to valid");
  }
  return std::nullopt;
}

}  // namespace

void keep_system_metadata(const Value& stored, Document& updated) {
  const Value* old = member(&stored, "metadata");
  auto metadata = updated.FindMember("metadata");
  if (old == nullptr || metadata == updated.MemberEnd() || !metadata->value.IsObject()) return;
  auto& a = updated.GetAllocator();
  Value& meta = metadata->value;
  auto keep = [&](const char* name) { set_copy(meta, name, member(old, name), a); };
  auto keep_if_absent = [&](const char* name) {
    auto now = meta.FindMember(name);
    if (now == meta.MemberEnd() || now->value.IsNull()) keep(name);
  };
  keep_if_absent("uid");
  keep("creationTimestamp");
  keep("generation");
  keep("deletionTimestamp");
  keep("deletionGracePeriodSeconds");
  // An explicit empty list resets managedFields, as the field manager takes it.
  keep_if_absent("managedFields");
}

std::optional<std::string> immutable_field_change(const kube::RequestInfo& info,
                                                  const Value& stored, const Value& updated) {
  if (!info.api_group.empty() || !info.subresource.empty()) return std::nullopt;
  if (info.resource == "pods") return pod_change(info, stored, updated);
  if (info.resource == "nodes") return node_change(info, stored, updated);
  return std::nullopt;
}

}  // namespace yurthub::cache
