// RFC 7386 merge-patch diff on RapidJSON documents (see merge_patch_diff.h). Called by the offline
// write journal. Pure; no I/O, no shared state.
#include "kube/merge_patch_diff.h"

#include "kube/json_patch.h"

namespace yurthub::kube {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

// Past this depth objects are not diffed but replaced whole, bounding the recursion.
constexpr int kMaxDepth = 1000;

// `v` copied into `allocator`, as apply_merge_patch puts it onto nothing: strings are copied (a
// plain RapidJSON 1.1 copy keeps const-string references) and the null members of objects dropped,
// which means the same in a merge patch. Past apply_merge_patch's depth limit, a plain copy.
Value copy_value(const Value& v, Allocator& allocator) {
  rapidjson::Document piece(&allocator);
  if (!apply_merge_patch(piece, v).ok()) piece.CopyFrom(v, allocator);
  Value out;
  out.Swap(piece);
  return out;
}

// Adds to `patch` (an object) the members that turn the object `original` into `modified`.
void diff_objects(const Value& original, const Value& modified, Value& patch, Allocator& allocator,
                  int depth) {
  auto name_copy = [&](const Value& name) {
    return Value(name.GetString(), name.GetStringLength(), allocator);
  };
  for (const auto& m : original.GetObject()) {
    if (!modified.HasMember(m.name)) patch.AddMember(name_copy(m.name), Value(), allocator);
  }
  for (const auto& m : modified.GetObject()) {
    auto it = original.FindMember(m.name);
    Value value;
    if (it != original.MemberEnd() && it->value.IsObject() && m.value.IsObject() &&
        depth < kMaxDepth) {
      value.SetObject();
      diff_objects(it->value, m.value, value, allocator, depth + 1);
      if (value.ObjectEmpty()) continue;
    } else if (it != original.MemberEnd() && it->value == m.value) {
      continue;
    } else {
      value = copy_value(m.value, allocator);
    }
    patch.AddMember(name_copy(m.name), value, allocator);
  }
}

}  // namespace

rapidjson::Document create_merge_patch(const Value& original, const Value& modified) {
  rapidjson::Document patch;
  if (original.IsObject() && modified.IsObject()) {
    patch.SetObject();
    diff_objects(original, modified, patch, patch.GetAllocator(), 0);
  } else {
    Value copy = copy_value(modified, patch.GetAllocator());
    static_cast<Value&>(patch).Swap(copy);
  }
  return patch;
}

}  // namespace yurthub::kube
