// Small RapidJSON helpers for the fake apiserver: parse/serialize compact JSON, read and write
// metadata fields, and add kind/apiVersion in front of a stored object. Objects are stored without
// kind/apiVersion (list items carry none), so a GET or a watch event prepends them. Pure.
#pragma once

#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "base/json_parse.h"
#include "base/result.h"

namespace yurthub::fake {

// Parses `text`; the error names the offset. The document may be any JSON value.
Result<rapidjson::Document> parse_json(std::string_view text);

// Compact serialization, as the apiserver writes for real clients: the hub's own.
using base::to_json;

// `{"kind":K,"apiVersion":AV,` + the members of `bare` (a serialized object).
std::string with_type_meta(std::string_view kind, std::string_view api_version,
                           std::string_view bare);

// obj.metadata, created as an empty object if missing or not an object. REQUIRES: obj is an object.
rapidjson::Value& ensure_metadata(rapidjson::Document& obj);

// obj.metadata.<field> as a string, or "" if absent or not a string.
std::string meta_string(const rapidjson::Value& obj, const char* field);

// Sets obj.metadata.<field> = value (adding it if absent). REQUIRES: obj is an object.
void set_meta_string(rapidjson::Document& obj, const char* field, std::string_view value);

// Removes obj.metadata.<field> if present.
void remove_meta(rapidjson::Document& obj, const char* field);
// Puts metadata's members in Go's ObjectMeta field order (name, generateName, namespace, selfLink,
// uid, resourceVersion, ... labels, annotations, ownerReferences, finalizers, managedFields), the
// order kube-apiserver writes them in (see the captures); members it does not know follow, in
// their own order.
void order_metadata(rapidjson::Document& obj);

// Removes top-level kind and apiVersion.
void strip_type_meta(rapidjson::Document& obj);

// Copies `from[member]` over `to[member]` (removing it from `to` when `from` lacks it).
void copy_member(rapidjson::Document& to, const rapidjson::Value& from, const char* member);

// Secret.stringData is write-only: as the v1 conversion does on every write, its entries are
// base64-encoded into data (overriding data's) and stringData is dropped. REQUIRES: an object.
void merge_string_data(rapidjson::Document& secret);

// Structural JSON equality: members compared regardless of order, numbers by value.
bool json_equal(const rapidjson::Value& a, const rapidjson::Value& b);

// A random RFC 4122 version-4 UUID, e.g. "ae93d730-b7ad-48d5-86ae-aa2964765a3d".
std::string random_uuid();
// `n` random characters from the apiserver's generateName alphabet.
std::string random_suffix(size_t n);
// Now as RFC 3339 UTC with seconds, e.g. "2026-11-21T13:42:57Z".
std::string now_rfc3339();

}  // namespace yurthub::fake
