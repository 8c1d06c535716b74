// Strategic merge patch; see strategic_patch.h. The steps follow strategicpatch's mergeMap: a
// map-level $patch first, then $retainKeys, then every $setElementOrder list, then the members
// one by one. The error texts are strategicpatch's (mergepatch/errors.go), since the apiserver
// passes most of them to the client verbatim.
#include "test/fake_apiserver/strategic_patch.h"

#include <string>
#include <utility>
#include <vector>

#include "test/fake_apiserver/element_order.h"
#include "test/fake_apiserver/go_format.h"
#include "test/fake_apiserver/json_util.h"
#include "test/fake_apiserver/patch_strategies.h"

namespace yurthub::fake {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;
using Outcome = std::optional<PatchError>;
using smp::bad_arg_type;
using smp::element_type;
using smp::key_of;
using smp::kMapType;
using smp::no_merge_key;
using smp::normalize;
using smp::partition;
using smp::same;
using smp::text;
using smp::unknown;

constexpr std::string_view kPatch = "$patch";
constexpr std::string_view kSetOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFrom = "$deleteFromPrimitiveList/";

Value* member(Value& obj, std::string_view name) {
  auto it = obj.FindMember(Value(rapidjson::StringRef(name.data(), name.size())));
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

// What the typed decode leaves of a value taken from the patch whole: no null members, no
// member named with a '$' (no field of a Kubernetes type is; a misspelt directive goes as an
// unknown field would), no directive-only list elements.
void strip(Value& v) {
  if (v.IsObject()) {
    for (auto it = v.MemberBegin(); it != v.MemberEnd();) {
      if (it->value.IsNull() || text(it->name).starts_with('$')) {
        it = v.EraseMember(it);
      } else {
        strip(it->value);
        ++it;
      }
    }
  } else if (v.IsArray()) {
    for (auto it = v.Begin(); it != v.End();) {
      if (it->IsObject() && it->HasMember("$patch")) {
        it = v.Erase(it);
      } else {
        strip(*it);
        ++it;
      }
    }
  }
}

class Merger {
 public:
  Merger(std::string_view kind, Allocator& alloc) : kind_(kind), alloc_(alloc) {}

  // `original` and `patch` are objects of the same allocator; `patch` is consumed.
  Outcome merge_map(Value& original, Value& patch, const std::string& path);

 private:
  Outcome retain_keys(Value& original, Value& patch);
  Outcome set_element_orders(Value& original, Value& patch, const std::string& path);
  Outcome check_order(const Value* patch_list, const Value& order, std::string_view key);
  Outcome merge_list(Value& original, Value& patch, const std::string& path, bool delete_list);
  Outcome merge_map_list(Value& original, Value& patch, const std::string& path,
                         std::string_view key);

  static std::string child(const std::string& path, std::string_view name) {
    return path.empty() ? std::string(name) : path + "." + std::string(name);
  }

  std::string_view kind_;
  Allocator& alloc_;
};

Outcome Merger::merge_map(Value& original, Value& patch, const std::string& path) {
  if (Value* directive = member(patch, kPatch)) {
    if (directive->IsString() && text(*directive) == "replace") {
      patch.EraseMember(patch.FindMember("$patch"));
      strip(patch);
      original = std::move(patch);
      return std::nullopt;
    }
    if (directive->IsString() && text(*directive) == "delete") {
      original.SetObject();
      return std::nullopt;
    }
    return unknown("unknown patch type: " + go_format(*directive) + " in map: " + go_format(patch));
  }
  if (!original.IsObject()) original.SetObject();
  if (auto e = retain_keys(original, patch)) return e;
  if (auto e = set_element_orders(original, patch, path)) return e;
  for (auto& m : patch.GetObject()) {
    std::string_view name = text(m.name);
    bool delete_list = name.starts_with(kDeleteFrom);
    if (delete_list) name.remove_prefix(kDeleteFrom.size());
    if (!delete_list && name.starts_with(kSetOrder)) continue;  // done above
    Value* have = member(original, name);
    if (m.value.IsNull()) {  // null deletes; a null for nothing is ignored
      if (have != nullptr)
        original.EraseMember(
            original.FindMember(Value(rapidjson::StringRef(name.data(), name.size()))));
      continue;
    }
    bool both_maps = have != nullptr && have->IsObject() && m.value.IsObject();
    bool both_lists = have != nullptr && have->IsArray() && m.value.IsArray();
    if (both_maps) {
      if (auto e = merge_map(*have, m.value, child(path, name))) return e;
    } else if (both_lists) {
      if (auto e = merge_list(*have, m.value, child(path, name), delete_list)) return e;
    } else if (!delete_list) {
      strip(m.value);
      if (have != nullptr) {
        *have = std::move(m.value);
      } else {
        original.AddMember(
            Value(name.data(), static_cast<rapidjson::SizeType>(name.size()), alloc_),
            std::move(m.value), alloc_);
      }
    }
  }
  return std::nullopt;
}

Outcome Merger::retain_keys(Value& original, Value& patch) {
  auto it = patch.FindMember("$retainKeys");
  if (it == patch.MemberEnd()) return std::nullopt;
  Value keep = std::move(it->value);
  patch.EraseMember(it);
  const PatchError bad{PatchFailure::BadRequest, "invalid patch format of retainKeys"};
  if (!keep.IsArray()) return bad;
  auto listed = [&keep](std::string_view name) {
    for (const auto& k : keep.GetArray()) {
      if (k.IsString() && text(k) == name) return true;
    }
    return false;
  };
  for (const auto& m : patch.GetObject()) {
    std::string_view name = text(m.name);
    if (m.value.IsNull() || name.starts_with(kDeleteFrom) || name.starts_with(kSetOrder)) continue;
    if (!listed(name)) return bad;
  }
  for (auto m = original.MemberBegin(); m != original.MemberEnd();) {
    m = listed(text(m->name)) ? m + 1 : original.EraseMember(m);
  }
  return std::nullopt;
}

Outcome Merger::check_order(const Value* patch_list, const Value& order, std::string_view key) {
  if (patch_list == nullptr || patch_list->Empty() || order.Empty()) return std::nullopt;
  std::vector<const Value*> kept;  // the patch list without its $patch: delete elements
  for (const auto& e : patch_list->GetArray()) {
    if (!key.empty() && !e.IsObject()) return bad_arg_type(kMapType, e);
    const Value* d = key.empty() ? nullptr : key_of(e, kPatch);
    if (d == nullptr || !d->IsString() || text(*d) != "delete") kept.push_back(&e);
  }
  std::size_t p = 0, o = 0;
  while (p < kept.size() && o < order.Size()) {
    if (kept[p]->IsObject() && kept[p]->HasMember("$patch")) {
      ++p;
      continue;
    }
    bool equal = false;
    if (key.empty()) {
      equal = json_equal(*kept[p], order[o]);
    } else {
      if (!order[o].IsObject()) return bad_arg_type(kMapType, order[o]);
      if (key_of(*kept[p], key) == nullptr) return no_merge_key(*kept[p], key);
      if (key_of(order[o], key) == nullptr) return no_merge_key(order[o], key);
      equal = same(key_of(*kept[p], key), key_of(order[o], key));
    }
    if (equal) ++p;
    ++o;
  }
  if (p < kept.size()) {
    return unknown("The order in patch list:\n" + go_format(*patch_list) +
                   "\n doesn't match $setElementOrder list:\n" + go_format(order) + "\n");
  }
  return std::nullopt;
}

Outcome Merger::set_element_orders(Value& original, Value& patch, const std::string& path) {
  std::vector<std::string> names;
  for (const auto& m : patch.GetObject()) {
    if (text(m.name).starts_with(kSetOrder)) names.emplace_back(text(m.name));
  }
  for (const std::string& name : names) {
    const Value& order = *member(patch, name);
    if (!order.IsArray()) return bad_arg_type("[]interface {}", order);
    std::string_view list = std::string_view(name).substr(kSetOrder.size());
    Value* have = member(original, list);
    Value* given = member(patch, list);
    if (have != nullptr && !have->IsArray()) return bad_arg_type("[]interface {}", *have);
    if (given != nullptr && !given->IsArray()) return bad_arg_type("[]interface {}", *given);
    if (have == nullptr && given == nullptr) continue;
    std::string field = child(path, list);
    std::string_view key = field_strategy(kind_, field).merge_key;
    if (auto e = check_order(given, order, key)) return e;
    Value empty(rapidjson::kArrayType);
    std::string type;
    Outcome type_error = element_type(have ? *have : empty, given ? *given : empty, &type);
    Value server_order(have ? *have : empty, alloc_);
    Value merged;
    if (have == nullptr) {
      merged = std::move(*given);
      strip(merged);
    } else {
      merged.CopyFrom(*have, alloc_);
      if (given != nullptr) {
        if (auto e = merge_list(merged, *given, field, false)) return e;
      }
    }
    std::vector<Value> in_order, others;
    if (auto e = partition(merged, order, key, !key.empty(), in_order, others)) return e;
    if (type_error) return type_error;
    Value result;
    if (auto e = normalize(std::move(in_order), std::move(others), order, server_order, key,
                           type == kMapType, result, alloc_)) {
      return e;
    }
    if (have != nullptr) {
      *have = std::move(result);
    } else {
      original.AddMember(Value(list.data(), static_cast<rapidjson::SizeType>(list.size()), alloc_),
                         std::move(result), alloc_);
    }
    if (given != nullptr)
      patch.EraseMember(
          patch.FindMember(Value(list.data(), static_cast<rapidjson::SizeType>(list.size()))));
  }
  return std::nullopt;
}

Outcome Merger::merge_list(Value& original, Value& patch, const std::string& path,
                           bool delete_list) {
  FieldStrategy strategy = field_strategy(kind_, path);
  if (!strategy.merge) {  // atomic: the patch's list (even a $deleteFromPrimitiveList one)
    strip(patch);
    original = std::move(patch);
    return std::nullopt;
  }
  if (original.Empty() && patch.Empty()) return std::nullopt;
  std::string type;
  if (auto e = element_type(original, patch, &type)) return e;
  if (type == kMapType) return merge_map_list(original, patch, path, strategy.merge_key);
  if (delete_list) {
    for (auto it = original.Begin(); it != original.End();) {
      bool doomed = false;
      for (const auto& d : patch.GetArray()) doomed = doomed || json_equal(d, *it);
      it = doomed ? original.Erase(it) : it + 1;
    }
    return std::nullopt;
  }
  Value server_order(original, alloc_);
  Value merged(rapidjson::kArrayType);  // the union, first occurrences kept
  for (const Value* list : {&original, &patch}) {
    for (const auto& v : list->GetArray()) {
      bool seen = false;
      for (const auto& m : merged.GetArray()) seen = seen || json_equal(m, v);
      if (!seen) merged.PushBack(Value(v, alloc_), alloc_);
    }
  }
  std::vector<Value> in_patch, others;
  if (auto e = partition(merged, patch, "", false, in_patch, others)) return e;
  return normalize(std::move(in_patch), std::move(others), patch, server_order, "", false, original,
                   alloc_);
}

Outcome Merger::merge_map_list(Value& original, Value& patch, const std::string& path,
                               std::string_view key) {
  if (key.empty()) return unknown("cannot merge lists without merge key for " + path);
  Value server_order(original, alloc_);
  std::vector<Value*> plain;
  bool replace = false;
  for (auto& e : patch.GetArray()) {
    const Value* directive = key_of(e, kPatch);
    if (directive == nullptr) {
      plain.push_back(&e);
    } else if (directive->IsString() && text(*directive) == "delete") {
      const Value* doomed = key_of(e, key);
      if (doomed == nullptr) return no_merge_key(e, key);
      for (auto it = original.Begin(); it != original.End();) {
        it = same(key_of(*it, key), doomed) ? original.Erase(it) : it + 1;
      }
    } else if (directive->IsString() && text(*directive) == "replace") {
      replace = true;
    } else if (directive->IsString() && text(*directive) == "merge") {
      return unknown("merging lists cannot yet be specified in the patch");
    } else {
      return unknown("unknown patch type: " + go_format(*directive) + " in map: " + go_format(e));
    }
  }
  if (replace) {  // the other elements are the list, as they are
    original.SetArray();
    for (Value* e : plain) {
      strip(*e);
      original.PushBack(std::move(*e), alloc_);
    }
    plain.clear();
    server_order.CopyFrom(original, alloc_);
  }
  Value patch_order(rapidjson::kArrayType);  // the merge keys of the patch's elements, in order
  for (Value* e : plain) {
    const Value* k = key_of(*e, key);
    if (k == nullptr) return no_merge_key(*e, key);
    Value only(rapidjson::kObjectType);
    only.AddMember(Value(key.data(), static_cast<rapidjson::SizeType>(key.size()), alloc_),
                   Value(*k, alloc_), alloc_);
    Value* match = nullptr;
    for (auto& o : original.GetArray()) {
      if (match == nullptr && same(key_of(o, key), k)) match = &o;
    }
    if (match != nullptr) {
      if (auto err = merge_map(*match, *e, path)) return err;
    } else {
      strip(*e);
      original.PushBack(std::move(*e), alloc_);
    }
    patch_order.PushBack(std::move(only), alloc_);
  }
  std::vector<Value> in_patch, others;
  if (auto e = partition(original, patch_order, key, true, in_patch, others)) return e;
  return normalize(std::move(in_patch), std::move(others), patch_order, server_order, key, true,
                   original, alloc_);
}

}  // namespace

std::optional<PatchError> apply_strategic_merge_patch(rapidjson::Document& doc,
                                                      const rapidjson::Value& patch,
                                                      std::string_view kind) {
  if (!patch.IsObject() && !patch.IsNull()) {  // null decodes as an empty map
    return PatchError{PatchFailure::BadRequest,
                      std::string("json: cannot unmarshal ") + go_json_type(patch) +
                          " into Go value of type map[string]interface {}"};
  }
  rapidjson::Document work;
  work.CopyFrom(doc, work.GetAllocator());
  Value patch_copy(rapidjson::kObjectType);
  if (patch.IsObject()) patch_copy.CopyFrom(patch, work.GetAllocator());
  Merger merger(kind, work.GetAllocator());
  if (auto e = merger.merge_map(work, patch_copy, "")) return e;
  doc.Swap(work);
  return std::nullopt;
}

}  // namespace yurthub::fake
