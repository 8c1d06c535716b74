// Null-safe RapidJSON accessors shared by the per-object filters (filters/*.cc): members that may
// be missing or of the wrong type, Kubernetes metadata (namespace, name, labels, annotations), an
// in-place array compaction, and the request match each filter's handles() does. Objects come
// from the apiserver or the cache, so nothing here assumes a shape. Pure; header-only.
#pragma once

#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>

#include <rapidjson/document.h>

#include "kube/request_info.h"

namespace yurthub::filters {

// The member `key` of `value`; nullptr when `value` is not an object or has no such member.
inline const rapidjson::Value* find_member(const rapidjson::Value& value, const char* key) {
  if (!value.IsObject()) return nullptr;
  auto it = value.FindMember(key);
  return it == value.MemberEnd() ? nullptr : &it->value;
}

// Goes through the const overload: comparing two non-const RapidJSON member iterators is
// ambiguous in C++20 (reversed operator==), which clang rejects.
inline rapidjson::Value* find_member(rapidjson::Value& value, const char* key) {
  return const_cast<rapidjson::Value*>(find_member(std::as_const(value), key));
}

// The string member `key` of `value`; nullopt when missing or not a string.
inline std::optional<std::string_view> string_member(const rapidjson::Value& value,
                                                     const char* key) {
  const rapidjson::Value* member = find_member(value, key);
  if (member == nullptr || !member->IsString()) return std::nullopt;
  return std::string_view(member->GetString(), member->GetStringLength());
}

// metadata.<field> of a Kubernetes object as a string; "" when absent or not a string.
inline std::string_view metadata_string(const rapidjson::Value& object, const char* field) {
  const rapidjson::Value* metadata = find_member(object, "metadata");
  if (metadata == nullptr) return {};
  return string_member(*metadata, field).value_or(std::string_view{});
}

// metadata.annotations[key] / metadata.labels[key]; nullopt when absent or not a string.
inline std::optional<std::string_view> annotation(const rapidjson::Value& object, const char* key) {
  const rapidjson::Value* metadata = find_member(object, "metadata");
  const rapidjson::Value* map = metadata ? find_member(*metadata, "annotations") : nullptr;
  return map ? string_member(*map, key) : std::nullopt;
}

inline std::optional<std::string_view> label(const rapidjson::Value& object, const char* key) {
  const rapidjson::Value* metadata = find_member(object, "metadata");
  const rapidjson::Value* map = metadata ? find_member(*metadata, "labels") : nullptr;
  return map ? string_member(*map, key) : std::nullopt;
}

// Sets object[key] = value (adding the member when missing). Returns whether the object changed.
// REQUIRES: object.IsObject(); `value` was allocated with `allocator` (it is moved from).
inline bool set_member(rapidjson::Value& object, const char* key, rapidjson::Value& value,
                       rapidjson::Document::AllocatorType& allocator) {
  rapidjson::Value* member = find_member(object, key);
  if (member == nullptr) {
    object.AddMember(rapidjson::Value(key, allocator), value, allocator);
    return true;
  }
  if (*member == value) return false;
  *member = value;
  return true;
}

// A JSON string holding a copy of `text`, allocated with `allocator`.
inline rapidjson::Value string_value(std::string_view text,
                                     rapidjson::Document::AllocatorType& allocator) {
  return rapidjson::Value(text.data(), static_cast<rapidjson::SizeType>(text.size()), allocator);
}

// Sets `port` on the entries of `ports` named "https" (only the first with `first_only`), as
// the masterservice family of filters point the kubernetes Service at the hub. `ports` may be
// null or of any type. Returns whether anything changed.
inline bool set_https_port(rapidjson::Value* ports, int port, bool first_only,
                           rapidjson::Document::AllocatorType& allocator) {
  if (ports == nullptr || !ports->IsArray()) return false;
  bool changed = false;
  for (rapidjson::Value& entry : ports->GetArray()) {
    if (!entry.IsObject() || string_member(entry, "name") != "https") continue;
    rapidjson::Value number(port);
    changed |= set_member(entry, "port", number, allocator);
    if (first_only) break;
  }
  return changed;
}

// Removes, in place and keeping order, the elements of `array` for which `keep(element)` is
// false. Returns how many were removed. REQUIRES: array.IsArray().
template <class Keep>
rapidjson::SizeType retain_if(rapidjson::Value& array, Keep&& keep) {
  rapidjson::SizeType kept = 0;
  const rapidjson::SizeType size = array.Size();
  for (rapidjson::SizeType i = 0; i < size; ++i) {
    if (!keep(static_cast<const rapidjson::Value&>(array[i]))) continue;
    if (kept != i) array[kept].Swap(array[i]);
    ++kept;
  }
  while (array.Size() > kept) array.PopBack();
  return size - kept;
}

// Whether `request` is a plain (no subresource) request for `resource` in `group` ("" = core) at
// one of `versions`, with one of `verbs`.
inline bool request_matches(const kube::RequestInfo& request, std::string_view group,
                            std::initializer_list<std::string_view> versions,
                            std::string_view resource, std::initializer_list<kube::Verb> verbs) {
  auto contains = [](const auto& list, const auto& item) {
    for (const auto& entry : list) {
      if (entry == item) return true;
    }
    return false;
  };
  // Non-resource requests have an empty `resource`, so they never match.
  return request.subresource.empty() && request.resource == resource &&
         request.api_group == group && contains(versions, request.api_version) &&
         contains(verbs, request.verb);
}

}  // namespace yurthub::filters
