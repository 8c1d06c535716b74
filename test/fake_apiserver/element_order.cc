// Element order and the shared error texts of the strategic merge patch; see element_order.h.
#include "test/fake_apiserver/element_order.h"

#include <utility>

#include "test/fake_apiserver/go_format.h"
#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake::smp {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

PatchError unknown(std::string message) { return {PatchFailure::Unknown, std::move(message)}; }

PatchError no_merge_key(const Value& map, std::string_view key) {
  return unknown("map: " + go_format(map) +
                 " does not contain declared merge key: " + std::string(key));
}

PatchError bad_arg_type(std::string_view expected, const Value& actual) {
  return unknown("expected a " + std::string(expected) + ", but received a " + go_type(actual));
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

namespace {

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
      const Value* d = key_of(item, "$patch");
      (d != nullptr && d->IsString() && text(*d) == "delete" ? deleted : kept)
          .push_back(std::move(item));
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

}  // namespace

// strategicpatch's sliceElementType: one Go type for every element of both lists.
Outcome element_type(const Value& a, const Value& b, std::string* type) {
  type->clear();
  for (const Value* list : {&a, &b}) {
    for (const auto& e : list->GetArray()) {
      std::string t = go_type(e);
      if (type->empty()) {
        *type = t;
        if (e.IsArray())
          return PatchError{PatchFailure::Rejected, "lists of lists are not supported"};
      } else if (t != *type) {
        return unknown("list element types are not identical: [" + go_format(a) + " " +
                       go_format(b) + "]");
      }
    }
  }
  if (type->empty()) return unknown("no elements in any of the given slices");
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
    if (!maps && v.IsObject())
      return unknown("runtime error: hash of unhashable type " + std::string(kMapType));
    bool found = false;
    for (rapidjson::SizeType k = 0; k < by.Size() && !found; ++k) {
      if (maps && !by[k].IsObject())
        return unknown("value for key " + std::to_string(k) + " is not a map.");
      found = maps ? (key_of(by[k], key) != nullptr && same(key_of(by[k], key), key_of(v, key)))
                   : json_equal(by[k], v);
    }
    (found ? in : out).push_back(std::move(v));
  }
  merged.SetArray();
  return std::nullopt;
}

}  // namespace yurthub::fake::smp
