// The containers of github.com/evanphx/json-patch v4.12.0 (kube-apiserver v1.26's JSON patch), on
// RapidJSON values: how it splits a path (findObject), reads array indices, gets, adds and removes
// a key, and compares values (lazyNode.equal). Internal to kube/json_patch.cc, which applies the
// operations with these; declared here only to keep each file small. Pure; no I/O.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "base/result.h"

namespace yurthub::kube::json_patch_nodes {

using Allocator = rapidjson::Document::AllocatorType;

// A path as findObject splits it: strings.Split(path, "/"), the first part dropped, the last one
// the key in its container, each part unescaped by decodePatchKey ("~1" -> '/', "~0" -> '~', left
// to right; any other '~' stays).
struct Path {
  std::vector<std::string> parents;
  std::string key;
};

// nullopt for a path without '/' ("" included): findObject needs two parts. The text before the
// first '/' is ignored, so "a/b" is "/b".
std::optional<Path> split_path(std::string_view text);

// The element `token` names among `size`, read by strconv.Atoi (sign, leading zeros) with a
// negative index counted back from `size` (SupportNegativeIndices), or nullopt.
std::optional<std::size_t> array_index(std::string_view token, std::size_t size);

// container.get(key): an object's member, nullptr when absent or null (Go decodes null into a nil
// node; a missing key is no error); an array's element (nullptr if null), an error on a bad index.
// REQUIRES: `container` is an object or an array.
Result<rapidjson::Value*> get(rapidjson::Value& container, const std::string& key);

// findObject: the object or array holding the path's key, or nullptr when a parent is missing,
// null, a scalar, or a bad index.
rapidjson::Value* find_container(rapidjson::Value& root, const Path& path);

// container.add: an object's member is set (replacing one of that name); in an array "-"
// appends, otherwise `value` is inserted before index `key` among size + 1 places (so "-1"
// appends too). REQUIRES: `container` is an object or an array.
Status add_at(rapidjson::Value& container, const std::string& key, rapidjson::Value&& value,
              Allocator& allocator);

// container.remove, moving the value into `*removed` if that is not null. An object's missing
// member is an error, as is a bad index. REQUIRES: `container` is an object or an array.
Status remove_at(rapidjson::Value& container, const std::string& key, rapidjson::Value* removed);

// lazyNode.equal of a document value and a patch value, see json_patch_nodes.cc.
bool go_equal(const rapidjson::Value& doc, const rapidjson::Value& value, int depth);

// Copies `v` into `allocator`, strings included.
rapidjson::Value deep_copy(const rapidjson::Value& v, Allocator& allocator);

// The nesting depth of `v` below `depth`, counted no further than base::kMaxJsonDepth + 1.
int depth_of(const rapidjson::Value& v, int depth);

// The compact JSON size of `v`, as json-patch's deepCopy measures it. REQUIRES: `v` is no deeper
// than base::kMaxJsonDepth (the writer recurses).
std::size_t json_size(const rapidjson::Value& v);

}  // namespace yurthub::kube::json_patch_nodes
