// The list machinery of strategic_patch.cc, apart so each file stays readable: strategicpatch's
// element type check, the partition of a merged list into the elements a patch (or a
// $setElementOrder list) names and the others, and normalizeElementOrder, which puts both in
// order and interleaves them. Also the error texts both files use (mergepatch/errors.go). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "test/fake_apiserver/json_patch.h"

namespace yurthub::fake::smp {

using Outcome = std::optional<PatchError>;

// reflect.TypeOf of a decoded JSON object.
inline constexpr std::string_view kMapType = "map[string]interface {}";

inline std::string_view text(const rapidjson::Value& s) {
  return {s.GetString(), s.GetStringLength()};
}

// A plain strategicpatch error (the apiserver's 500).
PatchError unknown(std::string message);
// "map: map[...] does not contain declared merge key: <key>".
PatchError no_merge_key(const rapidjson::Value& map, std::string_view key);
// "expected a <expected>, but received a <Go type of actual>".
PatchError bad_arg_type(std::string_view expected, const rapidjson::Value& actual);

// The merge key's value in a list element; nullptr (Go's nil) if absent or not a map.
const rapidjson::Value* key_of(const rapidjson::Value& element, std::string_view key);
// Go's interface equality on decoded JSON (nil == nil).
bool same(const rapidjson::Value* a, const rapidjson::Value* b);

// sliceElementType: the one Go type of every element of both lists (in `*type`); an error for
// mixed types, a list of lists (Rejected, as the apiserver answers it) or no elements at all.
Outcome element_type(const rapidjson::Value& a, const rapidjson::Value& b, std::string* type);

// Moves the elements of the array `merged` present in `by` (by merge key for maps, by value for
// scalars) to `in`, the others to `out`, in order; `merged` is left empty.
Outcome partition(rapidjson::Value& merged, const rapidjson::Value& by, std::string_view key,
                  bool maps, std::vector<rapidjson::Value>& in, std::vector<rapidjson::Value>& out);

// normalizeElementOrder: `patch_items` sorted by `patch_order`, `server_only` by `server_order`,
// then interleaved into `out` (an array of `alloc`).
Outcome normalize(std::vector<rapidjson::Value> patch_items,
                  std::vector<rapidjson::Value> server_only, const rapidjson::Value& patch_order,
                  const rapidjson::Value& server_order, std::string_view key, bool maps,
                  rapidjson::Value& out, rapidjson::Document::AllocatorType& alloc);

}  // namespace yurthub::fake::smp
