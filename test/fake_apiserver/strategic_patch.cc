// Strategic merge patch; see strategic_patch.h. The steps follow strategicpatch's mergeMap: a
// map-level $patch first, then $retainKeys, then every $setElementOrder list, then the members
// one by one. The error texts are strategicpatch's (mergepatch/errors.go), since the apiserver
// passes most of them to the client verbatim.
#include "test/fake_apiserver/strategic_patch.h"

#include <string>
#include <utility>
#include <vector>

#include "test/fake_apiserver/go_format.h"
#include "test/fake_apiserver/json_util.h"
#include "test/fake_apiserver/patch_strategies.h"

namespace yurthub::fake {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;
using Outcome = std::optional<PatchError>;

constexpr std::string_view kPatch = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kSetOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFrom = "$deleteFromPrimitiveList/";
constexpr std::string_view kMapType = "map[string]interface {}";

std::string_view text(const Value& s) { return {s.GetString(), s.GetStringLength()}; }

bool is_directive(std::string_view name) {
  return name == kPatch || name == kRetainKeys || name.starts_with(kSetOrder) ||
         name.starts_with(kDeleteFrom);
}

PatchError unknown(std::string message) { return {PatchFailure::Unknown, std::move(message)}; }

PatchError no_merge_key(const Value& map, std::string_view key) {
  return unknown("map: " + go_format(map) + " does not contain declared merge key: " +
                 std::string(key));
}

PatchError bad_arg_type(std::string_view expected, const Value& actual) {
  return unknown("expected a " + std::string(expected) + ", but received a " + go_type(actual));
}

Value* member(Value& obj, std::string_view name) {
  auto it = obj.FindMember(Value(rapidjson::StringRef(name.data(), name.size())));
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

// The merge key's value in a list element; nullptr (Go's nil) if absent or not a map.
const Value* key_of(const Value& element, std::string_view key) {
  if (!element.IsObject()) return nullptr;
  auto it = element.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  return it == element.MemberEnd() ? nullptr : &it->value;
}

// Go's interface equality on decoded JSON (nil == nil).
bool same(const Value* a, const Value* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return json_equal(*a, *b);
}

// What the typed decode leaves of a value taken from the patch whole: no null members, no
// directives, no directive-only list elements.
void strip(Value& v) {
  if (v.IsObject()) {
    for (auto it = v.MemberBegin(); it != v.MemberEnd();) {
      if (it->value.IsNull() || is_directive(text(it->name))) {
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

// strategicpatch's sliceElementType: one Go type for every element of both lists.
Outcome element_type(const Value& a, const Value& b, std::string* type) {
  type->clear();
  for (const Value* list : {&a, &b}) {
    for (const auto& e : list->GetArray()) {
      std::string t = go_type(e);
      if (type->empty()) {
        *type = t;
        if (e.IsArray()) return PatchError{PatchFailure::Rejected, "lists of lists are not supported"};
      } else if (t != *type) {
        return unknown("list element types are not identical: [" + go_format(a) + " " +
                       go_format(b) + "]");
      }
    }
  }
  if (type->empty()) return unknown("no elements in any of the given slices");
  return std::nullopt;
}

// An element's position in `order` (strategicpatch's index()): by merge key for maps, by value
// for scalars; -1 if absent.
int position(const Value& order, const Value& item, std::string_view key, bool maps) {
  const Value* want = maps ? key_of(item, key) : &item;
  for (rapidjson::SizeType i = 0; i < order.Size(); ++i) {
    if (same(maps ? key_of(order[i], key) : &order[i], want)) return static_cast<int>(i);
  }
  return -1;
}

Outcome require_merge_keys(const std::vector<Value>& items, std::string_view key) {
  for (const Value& item : items) {
    if (!item.IsObject()) return bad_arg_type(kMapType, item);
    if (key_of(item, key) == nullptr) return no_merge_key(item, key);
  }
  return std::nullopt;
}

// normalizeSliceOrder: sorts `items` by their position in `order` with sort.SliceStable's
// insertion sort and its comparator, which calls an element missing from `order` "less".
Outcome sort_by(std::vector<Value>& items, const Value& order, std::string_view key, bool maps) {
  std::vector<Value> deleted;  // elements still carrying $patch: delete go last
  if (maps) {
    if (auto e = require_merge_keys(items, key)) return e;
    for (const auto& o : order.GetArray()) {
      if (!o.IsObject()) return bad_arg_type(kMapType, o);
      if (key_of(o, key) == nullptr) return no_merge_key(o, key);
    }
    std::vector<Value> kept;
    for (Value& item : items) {
      const Value* d = key_of(item, kPatch);
      (d != nullptr && d->IsString() && text(*d) == "delete" ? deleted : kept).push_back(std::move(item));
    }
    items = std::move(kept);
  }
  std::vector<int> pos;
  for (const Value& item : items) pos.push_back(position(order, item, key, maps));
  for (std::size_t i = 1; i < items.size(); ++i) {
    for (std::size_t j = i; j > 0; --j) {
      bool less = pos[j] < 0 || pos[j - 1] < 0 || pos[j] < pos[j - 1];
      if (!less) break;
      std::swap(items[j], items[j - 1]);
      std::swap(pos[j], pos[j - 1]);
    }
  }
  for (Value& d : deleted) items.push_back(std::move(d));
  return std::nullopt;
}

// normalizeElementOrder: patch items in `patch_order`, server-only items in `server_order`, then
// interleaved (mergeSortedSlice): a server-only item goes first only if both are in
// `server_order` and it comes earlier there, so a new item lands before the remaining
// server-only ones.
Outcome normalize(std::vector<Value> patch_items, std::vector<Value> server_only,
                  const Value& patch_order, const Value& server_order, std::string_view key,
                  bool maps, Value& out, Allocator& alloc) {
  if (auto e = sort_by(patch_items, patch_order, key, maps)) return e;
  if (auto e = sort_by(server_only, server_order, key, maps)) return e;
  out.SetArray();
  std::size_t i = 0, j = 0;
  while (i < server_only.size() || j < patch_items.size()) {
    bool left = j >= patch_items.size();
    if (!left && i < server_only.size()) {
      int li = position(server_order, server_only[i], key, maps);
      int ri = position(server_order, patch_items[j], key, maps);
      left = li >= 0 && ri >= 0 && li < ri;
    }
    out.PushBack(std::move(left ? server_only[i++] : patch_items[j++]), alloc);
  }
  return std::nullopt;
}

// Splits `merged` into the elements present in `by` and the others (partitionMapsByPresentInList
// and partitionPrimitivesByPresentInList).
Outcome partition(Value& merged, const Value& by, std::string_view key, bool maps,
                  std::vector<Value>& in, std::vector<Value>& out) {
  for (Value& v : merged.GetArray()) {
    if (maps && !v.IsObject()) return bad_arg_type(kMapType, v);
    if (maps && key_of(v, key) == nullptr) return no_merge_key(v, key);
    if (!maps && v.IsObject()) return unknown("runtime error: hash of unhashable type " + std::string(kMapType));
    bool found = false;
    for (rapidjson::SizeType k = 0; k < by.Size() && !found; ++k) {
      if (maps && !by[k].IsObject()) return unknown("value for key " + std::to_string(k) + " is not a map.");
      found = maps ? (key_of(by[k], key) != nullptr && same(key_of(by[k], key), key_of(v, key)))
                   : json_equal(by[k], v);
    }
    (found ? in : out).push_back(std::move(v));
  }
  merged.SetArray();
  return std::nullopt;
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
      if (have != nullptr) original.EraseMember(original.FindMember(Value(rapidjson::StringRef(name.data(), name.size()))));
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
        original.AddMember(Value(name.data(), static_cast<rapidjson::SizeType>(name.size()), alloc_),
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
    if (given != nullptr) patch.EraseMember(patch.FindMember(Value(list.data(), static_cast<rapidjson::SizeType>(list.size()))));
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
  return normalize(std::move(in_patch), std::move(others), patch, server_order, "", false,
                   original, alloc_);
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
    return PatchError{PatchFailure::BadRequest, std::string("json: cannot unmarshal ") +
                                                    go_json_type(patch) +
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
