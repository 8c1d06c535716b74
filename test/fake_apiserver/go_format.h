// How Go prints a decoded JSON value (map[string]interface{}, []interface{}, string, int64,
// float64, bool, nil), for error messages that quote values the way the apiserver's do:
// strategicpatch's "map: map[a:1 b:x] does not contain declared merge key: name". Used by
// strategic_patch.cc. Pure.
#pragma once

#include <string>

#include <rapidjson/document.h>

namespace yurthub::fake {

// fmt's %v: "map[k:v ...]" with sorted keys, "[a b]", strings bare, "<nil>" for null.
std::string go_format(const rapidjson::Value& value);

// reflect.TypeOf(v).String(): "map[string]interface {}", "[]interface {}", "string", "int64"
// (integers, as the apiserver decodes patches), "float64", "bool", "<nil>".
std::string go_type(const rapidjson::Value& value);

}  // namespace yurthub::fake
