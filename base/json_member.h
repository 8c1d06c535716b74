// find_member(): a member of a JSON value that may not be an object, as the hub reads objects the
// apiserver returned (a Node for the Autonomy condition, cache/autonomy_condition.cc; a Pod for
// the OTA checks, ota/pod_checks.cc). filters/object_access.h has the filters' own accessors.
#pragma once

#include <rapidjson/document.h>

namespace yurthub::base {

// The member `name` of `object`; nullptr when `object` is not an object or has no such member.
inline const rapidjson::Value* find_member(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

}  // namespace yurthub::base
