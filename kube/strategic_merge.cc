// Kubernetes strategic merge patch on RapidJSON documents (see strategic_merge.h), following
// strategicpatch's mergeMap / mergeSlice / mergePatchIntoOriginal. Called by the offline write
// journal and the fake apiserver. Pure; no I/O, no shared state.
#include "kube/strategic_merge.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yurthub::kube {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;
using Keys = std::vector<const Value*>;  // merge-key values (or whole elements); null: none

// Deeper patches are refused rather than risking the stack in the recursive helpers.
constexpr int kMaxDepth = 1000;
constexpr size_t kNotFound = static_cast<size_t>(-1);

constexpr std::string_view kPatchDirective = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFromList = "$deleteFromPrimitiveList/";

// A list with patchStrategy "merge": elements are matched by `key`, or are strings merged as a set
// when `key` is empty. `kind` empty: every kind (ObjectMeta).
struct MergeList {
  std::string_view kind;
  std::string_view path;
  std::string_view key;
};

constexpr MergeList kMergeLists[] = {
    {"", "metadata.ownerReferences", "uid"},
    {"", "metadata.finalizers", ""},
    {"Pod", "spec.containers", "name"},
    {"Pod", "spec.initContainers", "name"},
    {"Pod", "spec.ephemeralContainers", "name"},
    {"Pod", "spec.containers[].env", "name"},
    {"Pod", "spec.containers[].ports", "containerPort"},
    {"Pod", "spec.containers[].volumeMounts", "mountPath"},
    {"Pod", "spec.containers[].volumeDevices", "devicePath"},
    {"Pod", "spec.volumes", "name"},
    {"Pod", "spec.imagePullSecrets", "name"},
    {"Pod", "spec.hostAliases", "ip"},
    {"Pod", "status.conditions", "type"},
    {"Pod", "status.podIPs", "ip"},
    {"Pod", "status.hostIPs", "ip"},
    {"Node", "spec.podCIDRs", ""},
    {"Node", "status.conditions", "type"},
    {"Node", "status.addresses", "type"},
};

struct Strategy {
  bool merge = false;
  std::string_view key;
};

Strategy strategy_for(std::string_view kind, std::string_view path) {
  // Container and EphemeralContainer carry the same tags, so their sub-lists share the entries.
  std::string alias;
  for (std::string_view prefix : {"spec.initContainers[]", "spec.ephemeralContainers[]"}) {
    if (path.starts_with(prefix)) {
      alias = "spec.containers[]" + std::string(path.substr(prefix.size()));
      path = alias;
    }
  }
  for (const MergeList& list : kMergeLists) {
    if ((list.kind.empty() || list.kind == kind) && list.path == path) return {true, list.key};
  }
  return {};
}

std::string_view string_of(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

const Value* member(const Value& object, std::string_view name) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(Value(rapidjson::StringRef(name.data(), name.size())));
  return it == object.MemberEnd() ? nullptr : &it->value;
}

Value* member(Value& object, std::string_view name) {
  return const_cast<Value*>(member(std::as_const(object), name));
}

// Strings are copied: RapidJSON 1.1's allocator copy keeps const-string references.
void copy_scalar(Value& out, const Value& v, Allocator& allocator) {
  if (v.IsString()) {
    out.SetString(v.GetString(), v.GetStringLength(), allocator);
  } else {
    out.CopyFrom(v, allocator);  // null, booleans, numbers
  }
}

std::string child_path(const std::string& path, std::string_view name) {
  return path.empty() ? std::string(name) : path + "." + std::string(name);
}

Error fail(const std::string& path, const std::string& what) {
  return make_error("strategic merge patch: " + (path.empty() ? "" : path + ": ") + what);
}

// A value strategicpatch takes from the patch as it is (a map with `$patch: replace`), as the
// apiserver's typed decode leaves it: without null members, members named with a '$' (the
// directives, and misspelt ones, which name no field of any Kubernetes object), or list elements
// that carry a `$patch`. Bounded by the patch's parse depth.
void drop_decode_leftovers(Value& v) {
  if (v.IsObject()) {
    for (auto it = v.MemberBegin(); it != v.MemberEnd();) {
      if (it->value.IsNull() || string_of(it->name).starts_with('$')) {
        it = v.EraseMember(it);
      } else {
        drop_decode_leftovers(it->value);
        ++it;
      }
    }
  } else if (v.IsArray()) {
    for (auto it = v.Begin(); it != v.End();) {
      if (it->IsObject() && member(*it, kPatchDirective) != nullptr) {
        it = v.Erase(it);
      } else {
        drop_decode_leftovers(*it);
        ++it;
      }
    }
  }
}

// `{..., "$patch": "delete"}`: an element or map to delete.
bool is_delete_marker(const Value& v) {
  const Value* d = member(v, kPatchDirective);
  return d != nullptr && d->IsString() && string_of(*d) == "delete";
}

// The merge-key value of a list element, or the element itself for a list of primitives.
const Value* key_of(const Value& element, std::string_view key) {
  return key.empty() ? &element : member(element, key);
}

size_t index_in(const Keys& keys, const Value* key) {
  if (key == nullptr) return kNotFound;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] != nullptr && *keys[i] == *key) return i;
  }
  return kNotFound;
}

// strategicpatch's normalizeElementOrder: the elements named in `order` sorted by it, the others
// sorted by `server_order`, then interleaved (mergeSortedSlice): an unnamed element goes first
// only if both it and the next named one are in `server_order` and it came before there.
void normalize_order(Value& list, std::string_view key, const Keys& order, const Keys& server_order,
                     Allocator& allocator) {
  const size_t n = list.Size();
  std::vector<size_t> order_index(n), server_index(n), named, rest;
  for (size_t i = 0; i < n; ++i) {
    const Value* k = key_of(list[static_cast<rapidjson::SizeType>(i)], key);
    order_index[i] = index_in(order, k);
    server_index[i] = index_in(server_order, k);
    (order_index[i] != kNotFound ? named : rest).push_back(i);
  }
  std::stable_sort(named.begin(), named.end(),
                   [&](size_t a, size_t b) { return order_index[a] < order_index[b]; });
  std::stable_sort(rest.begin(), rest.end(),
                   [&](size_t a, size_t b) { return server_index[a] < server_index[b]; });
  Value sorted(rapidjson::kArrayType);
  sorted.Reserve(static_cast<rapidjson::SizeType>(n), allocator);
  size_t r = 0, m = 0;
  while (r < rest.size() || m < named.size()) {
    bool take_rest = m == named.size();
    if (r < rest.size() && m < named.size()) {
      size_t left = server_index[rest[r]], right = server_index[named[m]];
      take_rest = left != kNotFound && right != kNotFound && left < right;
    }
    size_t i = take_rest ? rest[r++] : named[m++];
    sorted.PushBack(list[static_cast<rapidjson::SizeType>(i)], allocator);  // moves
  }
  list.Swap(sorted);
}

// `$deleteFromPrimitiveList/<list>: values`: removes every element of `list` equal to one of
// `values`. A missing list stays missing.
void delete_values(Value* list, const Value& values) {
  if (list == nullptr || !list->IsArray()) return;
  for (rapidjson::SizeType i = list->Size(); i-- > 0;) {
    const Value& e = (*list)[i];
    if (std::any_of(values.Begin(), values.End(), [&](const Value& v) { return v == e; })) {
      list->Erase(list->Begin() + i);
    }
  }
}

// strategicpatch's sliceElementType: one element type across both lists, and no lists of lists.
Status check_element_types(const Value& target, const Value& patch, const std::string& path) {
  std::optional<rapidjson::Type> type;
  for (const Value* list : {&target, &patch}) {
    for (const Value& e : list->GetArray()) {
      if (e.IsArray()) return fail(path, "lists of lists cannot be merged");
      rapidjson::Type t = e.IsBool() ? rapidjson::kTrueType : e.GetType();
      if (type && *type != t) return fail(path, "list elements are not all of the same type");
      type = t;
    }
  }
  return {};
}

// strategicpatch's validatePatchWithSetOrderList: the patch list's elements (deletions and other
// directives aside) must appear in `order`, in the same relative order.
Status check_order(const Value& patch_list, const Value& order, std::string_view key,
                   std::string_view field, const std::string& path) {
  const std::string no_key = " has no merge key " + std::string(key);
  rapidjson::SizeType o = 0;
  for (const Value& e : patch_list.GetArray()) {
    if (member(e, kPatchDirective) != nullptr) continue;
    const Value* k = key_of(e, key);
    if (k == nullptr) return fail(path, "element" + no_key);
    for (bool found = false; !found; ++o) {
      if (o == order.Size()) {
        return fail(path, "the patch list does not match $setElementOrder/" + std::string(field));
      }
      const Value* wanted = key_of(order[o], key);
      if (wanted == nullptr) return fail(path, "$setElementOrder entry" + no_key);
      found = *wanted == *k;
    }
  }
  return {};
}

class Merger {
 public:
  Merger(std::string kind, Allocator& allocator) : kind_(std::move(kind)), alloc_(allocator) {}

  // Merges the patch object `patch` into the object `target`.
  Status merge_map(Value& target, const Value& patch, const std::string& path, int depth);

 private:
  Status merge_member(Value& target, std::string_view name, const Value& patch,
                      const std::string& path, int depth);
  Status merge_list(Value& target, const Value& patch, const std::string& path, int depth);
  Status merge_keyed_list(Value& target, const Value& patch, std::string_view key,
                          const std::string& path, int depth);
  void merge_set(Value& target, const Value& patch);
  Status apply_element_order(Value& target, const Value& patch, std::string_view field,
                             const Value& order, const std::string& path, int depth);
  Status retain_keys(Value& target, const Value& patch, const Value& keys, const std::string& path);
  // Sets `out` to `patch` merged onto nothing: what a patch value becomes where the target has
  // nothing to merge it into.
  Status build(Value& out, const Value& patch, const std::string& path, int depth);

  const std::string kind_;
  Allocator& alloc_;
};

Status Merger::build(Value& out, const Value& patch, const std::string& path, int depth) {
  if (patch.IsObject()) {
    out.SetObject();
    return merge_map(out, patch, path, depth);
  }
  if (patch.IsArray()) {
    out.SetArray();
    return merge_list(out, patch, path, depth);
  }
  copy_scalar(out, patch, alloc_);
  return {};
}

Status Merger::merge_map(Value& target, const Value& patch, const std::string& path, int depth) {
  if (depth > kMaxDepth) return fail(path, "the patch is nested too deeply");
  if (const Value* directive = member(patch, kPatchDirective)) {
    if (!directive->IsString()) return fail(path, "$patch must be a string");
    std::string_view d = string_of(*directive);
    if (d == "delete") {
      target.SetObject();  // strategicpatch leaves an empty map
      return {};
    }
    if (d != "replace") {  // "merge" too, which it only names: strategicpatch refuses it
      return fail(path, "unknown patch type: " + std::string(d) + " in map");
    }
    // strategicpatch's handleDirectiveInMergeMap returns the patch itself, less `$patch`: it is
    // not merged, so its nulls and directives are not applied, only dropped by the decode.
    target.CopyFrom(patch, alloc_);
    drop_decode_leftovers(target);
    return {};
  }
  for (const auto& m : patch.GetObject()) {
    std::string_view name = string_of(m.name);
    if (!name.starts_with('$') || name == kPatchDirective) continue;
    bool list_directive = name.starts_with(kSetElementOrder) || name.starts_with(kDeleteFromList);
    if (!list_directive && name != kRetainKeys) {
      return fail(path, "unknown directive " + std::string(name));
    }
    if (!m.value.IsArray()) return fail(path, std::string(name) + " must be a list");
  }
  if (const Value* keys = member(patch, kRetainKeys)) {
    if (Status s = retain_keys(target, patch, *keys, path); !s) return s;
  }
  std::vector<std::string_view> ordered;  // lists merged with their $setElementOrder
  for (const auto& m : patch.GetObject()) {
    std::string_view name = string_of(m.name);
    if (!name.starts_with(kSetElementOrder)) continue;
    std::string_view field = name.substr(kSetElementOrder.size());
    ordered.push_back(field);
    if (Status s = apply_element_order(target, patch, field, m.value, path, depth); !s) return s;
  }
  for (const auto& m : patch.GetObject()) {
    std::string_view name = string_of(m.name);
    if (name.starts_with('$') || std::find(ordered.begin(), ordered.end(), name) != ordered.end()) {
      continue;
    }
    if (Status s = merge_member(target, name, m.value, child_path(path, name), depth); !s) return s;
  }
  for (const auto& m : patch.GetObject()) {
    std::string_view name = string_of(m.name);
    if (name.starts_with(kDeleteFromList)) {
      delete_values(member(target, name.substr(kDeleteFromList.size())), m.value);
    }
  }
  return {};
}

Status Merger::merge_member(Value& target, std::string_view name, const Value& patch,
                            const std::string& path, int depth) {
  Value name_ref(rapidjson::StringRef(name.data(), name.size()));
  auto it = target.FindMember(name_ref);
  if (patch.IsNull()) {
    for (; it != target.MemberEnd(); it = target.FindMember(name_ref)) target.EraseMember(it);
    return {};
  }
  if (it == target.MemberEnd()) {
    if (is_delete_marker(patch)) return {};
    Value built;
    if (Status s = build(built, patch, path, depth + 1); !s) return s;
    target.AddMember(Value(name.data(), static_cast<rapidjson::SizeType>(name.size()), alloc_),
                     built, alloc_);
    return {};
  }
  Value& current = it->value;
  if (current.IsObject() && patch.IsObject()) return merge_map(current, patch, path, depth + 1);
  if (current.IsArray() && patch.IsArray()) return merge_list(current, patch, path, depth + 1);
  if (is_delete_marker(patch)) {  // a `$patch` map over a non-map drops the member, as upstream
    target.EraseMember(it);
    return {};
  }
  Value built;  // a different type, or a scalar: replaced
  if (Status s = build(built, patch, path, depth + 1); !s) return s;
  current.Swap(built);
  return {};
}

Status Merger::merge_list(Value& target, const Value& patch, const std::string& path, int depth) {
  if (depth > kMaxDepth) return fail(path, "the patch is nested too deeply");
  Strategy strategy = strategy_for(kind_, path);
  if (!strategy.merge) {
    Value replaced(rapidjson::kArrayType);
    for (const Value& e : patch.GetArray()) {
      if (is_delete_marker(e)) continue;
      Value built;
      if (Status s = build(built, e, path + "[]", depth + 1); !s) return s;
      replaced.PushBack(built, alloc_);
    }
    target.Swap(replaced);
    return {};
  }
  if (Status s = check_element_types(target, patch, path); !s) return s;
  bool objects =
      (!target.Empty() && target[0].IsObject()) || (!patch.Empty() && patch[0].IsObject());
  if (!objects) {
    merge_set(target, patch);
    return {};
  }
  if (strategy.key.empty()) return fail(path, "a list of objects needs a merge key");
  return merge_keyed_list(target, patch, strategy.key, path, depth);
}

// strategicpatch's mergeSliceWithSpecialElements, mergeSliceWithoutSpecialElements, then the
// order of mergeSlice.
Status Merger::merge_keyed_list(Value& target, const Value& patch, std::string_view key,
                                const std::string& path, int depth) {
  const std::string no_key = "element has no merge key " + std::string(key);
  bool replace = false;
  std::vector<const Value*> plain;
  for (const Value& e : patch.GetArray()) {
    const Value* directive = member(e, kPatchDirective);
    if (directive == nullptr) {
      plain.push_back(&e);
      continue;
    }
    if (!directive->IsString()) return fail(path, "$patch must be a string");
    std::string_view d = string_of(*directive);
    if (d == "replace") {
      replace = true;
    } else if (d != "delete") {
      return fail(path, "unsupported $patch \"" + std::string(d) + "\" in a list");
    } else if (const Value* k = member(e, key)) {
      for (rapidjson::SizeType i = target.Size(); i-- > 0;) {
        const Value* tk = member(target[i], key);
        if (tk != nullptr && *tk == *k) target.Erase(target.Begin() + i);
      }
    } else {
      return fail(path, no_key);
    }
  }
  if (replace) target.SetArray();                  // the other elements, merged onto nothing
  const rapidjson::SizeType kept = target.Size();  // the target's elements, deletions done
  const std::string element_path = path + "[]";
  Keys order;
  for (const Value* e : plain) {
    const Value* k = member(*e, key);
    if (k == nullptr) return fail(path, no_key);
    order.push_back(k);
    auto found = std::find_if(target.Begin(), target.End(), [&](const Value& t) {
      const Value* tk = member(t, key);
      return tk != nullptr && *tk == *k;
    });
    if (found != target.End()) {
      if (Status s = merge_map(*found, *e, element_path, depth + 1); !s) return s;
      continue;
    }
    Value built;
    if (Status s = build(built, *e, element_path, depth + 1); !s) return s;
    target.PushBack(built, alloc_);
  }
  if (replace) return {};
  Keys server_order;
  for (rapidjson::SizeType i = 0; i < kept; ++i) server_order.push_back(member(target[i], key));
  normalize_order(target, key, order, server_order, alloc_);
  return {};
}

// A list of primitives with the merge strategy: the union of both (mergeSlice's
// deduplicateScalars), then the order of mergeSlice.
void Merger::merge_set(Value& target, const Value& patch) {
  Value merged(rapidjson::kArrayType);
  auto add = [&](Value& v) {
    if (std::none_of(merged.Begin(), merged.End(), [&](const Value& m) { return m == v; })) {
      merged.PushBack(v, alloc_);
    }
  };
  for (Value& e : target.GetArray()) add(e);
  const rapidjson::SizeType from_target = merged.Size();
  for (const Value& e : patch.GetArray()) {
    Value copy;
    copy_scalar(copy, e, alloc_);
    add(copy);
  }
  target.Swap(merged);
  Keys order, server_order;
  for (const Value& e : patch.GetArray()) order.push_back(&e);
  for (rapidjson::SizeType i = 0; i < from_target; ++i) server_order.push_back(&target[i]);
  normalize_order(target, "", order, server_order, alloc_);
}

// strategicpatch's mergePatchIntoOriginal for one `$setElementOrder/<field>`: merges the field's
// patch list (if any), then orders the result by `order`, the target's original order second.
Status Merger::apply_element_order(Value& target, const Value& patch, std::string_view field,
                                   const Value& order, const std::string& path, int depth) {
  const std::string list_path = child_path(path, field);
  Strategy strategy = strategy_for(kind_, list_path);
  std::string_view key = strategy.merge ? strategy.key : std::string_view();
  const Value* patch_list = member(patch, field);
  Value* target_list = member(target, field);
  if (patch_list != nullptr && !patch_list->IsArray()) {
    return fail(list_path, "must be a list, as $setElementOrder names it");
  }
  if (target_list != nullptr && !target_list->IsArray()) {
    return fail(list_path, "the target's value is not a list, as $setElementOrder needs");
  }
  if (patch_list != nullptr) {
    if (Status s = check_order(*patch_list, order, key, field, list_path); !s) return s;
  }
  if (patch_list == nullptr && target_list == nullptr) return {};
  // The target's original keys, copied: the merge below may rewrite or move the elements.
  rapidjson::Document saved;
  Keys server_order;
  if (target_list != nullptr) {
    saved.SetArray();
    for (const Value& e : target_list->GetArray()) {
      const Value* k = key_of(e, key);
      saved.PushBack(k != nullptr ? Value(*k, saved.GetAllocator()) : Value(),
                     saved.GetAllocator());
    }
    for (const Value& k : saved.GetArray()) server_order.push_back(k.IsNull() ? nullptr : &k);
  } else {
    target.AddMember(Value(field.data(), static_cast<rapidjson::SizeType>(field.size()), alloc_),
                     Value(rapidjson::kArrayType), alloc_);
    target_list = &(target.MemberEnd() - 1)->value;
  }
  if (patch_list != nullptr) {
    if (Status s = merge_list(*target_list, *patch_list, list_path, depth + 1); !s) return s;
  }
  Keys wanted;
  for (const Value& e : order.GetArray()) {
    const Value* k = key_of(e, key);
    if (k == nullptr)
      return fail(list_path, "$setElementOrder entry has no merge key " + std::string(key));
    wanted.push_back(k);
  }
  normalize_order(*target_list, key, wanted, server_order, alloc_);
  return {};
}

// `$retainKeys`: every member the patch sets must be listed; the target's unlisted members go.
Status Merger::retain_keys(Value& target, const Value& patch, const Value& keys,
                           const std::string& path) {
  auto listed = [&](const Value& name) {
    return std::any_of(keys.Begin(), keys.End(), [&](const Value& k) { return k == name; });
  };
  for (const Value& k : keys.GetArray()) {
    if (!k.IsString()) return fail(path, "$retainKeys must list strings");
  }
  for (const auto& m : patch.GetObject()) {
    if (m.value.IsNull() || string_of(m.name).starts_with('$') || listed(m.name)) continue;
    return fail(path, "$retainKeys does not list \"" + std::string(string_of(m.name)) + "\"");
  }
  for (auto it = target.MemberBegin(); it != target.MemberEnd();) {
    it = listed(it->name) ? it + 1 : target.EraseMember(it);
  }
  return {};
}

}  // namespace

Status apply_strategic_merge_patch(rapidjson::Document& target, const Value& patch) {
  if (!patch.IsObject()) return make_error("strategic merge patch: the patch is not a JSON object");
  if (!target.IsObject()) {
    return make_error("strategic merge patch: the target is not a JSON object");
  }
  const Value* kind = member(target, "kind");
  Merger merger(kind != nullptr && kind->IsString() ? std::string(string_of(*kind)) : "",
                target.GetAllocator());
  return merger.merge_map(target, patch, "", 0);
}

}  // namespace yurthub::kube
