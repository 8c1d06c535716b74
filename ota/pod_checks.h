// What the OTA endpoints decide about a pod read from the apiserver, as YurtHub's
// pkg/yurthub/otaupdate/ota.go does: whether it may be upgraded here (checkPodStatus and
// checkPodImageReady, with their messages), which version it is to be upgraded to
// (imagepreheat.GetPodNextHashVersion), which YurtStaticSet a static pod belongs to, and the
// status patch an image pre-pull request makes (podutil.UpdatePodCondition). Pure functions on
// the pod's JSON; called by ota/ota_handler.cc. Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

namespace yurthub::ota {

// The condition types and the message prefix yurt-manager's daemonsetupgradestrategy uses.
inline constexpr std::string_view kPodNeedUpgrade = "PodNeedUpgrade";
inline constexpr std::string_view kPodImageReady = "PodImageReady";
inline constexpr std::string_view kVersionPrefix = "controllerrevision: ";
// A static pod's ConfigMap is its YurtStaticSet's name with this prefix (yurtstaticset/util).
inline constexpr std::string_view kStaticSetConfigMapPrefix = "yurt-static-set-";

// Why `pod` may not be upgraded on `node_name` (upstream's checkPodStatus): it is being deleted,
// it runs on another node, or its PodNeedUpgrade condition is not True. nullopt: it may.
std::optional<std::string> pod_status_problem(const rapidjson::Value& pod,
                                              std::string_view node_name);

// Why `pod`'s image is not ready for the upgrade (upstream's checkPodImageReady): its
// PodImageReady condition, when it has one, is not True or names another version than
// next_hash_version(). nullopt: ready (or no such condition).
std::optional<std::string> image_ready_problem(const rapidjson::Value& pod);

// The version the pod is to be upgraded to: its PodNeedUpgrade condition's message without
// kVersionPrefix; "" without that condition.
std::string next_hash_version(const rapidjson::Value& pod);

// The kind of the pod's first ownerReference; nullopt when it has none.
std::optional<std::string> first_owner_kind(const rapidjson::Value& pod);

// The YurtStaticSet name of static pod `pod_name` (`<name>-<node_name>`), nullopt when the name
// does not end with "-<node_name>". As upstream, the part before the first "-<node_name>".
std::optional<std::string> static_set_name(std::string_view pod_name, std::string_view node_name);

// The merge patch of pods/<name>/status an image pre-pull request sends: all of the pod's
// conditions, its PodImageReady condition set (or added) to False with message kVersionPrefix +
// next_hash_version(). As UpdatePodCondition, the replaced condition keeps its
// lastTransitionTime when its status was already False, and gets `now` (RFC 3339) otherwise.
std::string image_pull_patch(const rapidjson::Value& pod, std::string_view now);

}  // namespace yurthub::ota
