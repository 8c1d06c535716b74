// What an update or patch may not change, as kube-apiserver v1.26's registry enforces it for the
// types the node and its pods write offline: rest.BeforeUpdate's system metadata (kept from the
// stored object, whatever the write says) and the types' ValidateXUpdate rules (a Pod's spec
// beyond images, tolerations, activeDeadlineSeconds; a Node's podCIDRs and providerID once set).
// Pure; called by apply_offline_write (offline_apply.cc) on a write to an object itself (a
// /status write keeps the stored spec and metadata whole).
#pragma once

#include <optional>
#include <string>

#include <rapidjson/document.h>

#include "kube/request_info.h"

namespace yurthub::cache {

// Sets in `updated` the metadata the apiserver keeps from `stored` on any update: the uid when
// the write has none, creationTimestamp, generation, deletionTimestamp and
// deletionGracePeriodSeconds; and managedFields when the write has none.
void keep_system_metadata(const rapidjson::Value& stored, rapidjson::Document& updated);

// The apiserver's 422 message when `updated` changes a field its type makes immutable, else
// nullopt. `info` names the object (resource, name); only writes to the object itself are judged.
std::optional<std::string> immutable_field_change(const kube::RequestInfo& info,
                                                  const rapidjson::Value& stored,
                                                  const rapidjson::Value& updated);

}  // namespace yurthub::cache
