// The mutation of /mutate-pods: a Pod annotated apps.openyurt.io/exclude-host-network-pool: "true"
// gets the required node affinity `nodepool.openyurt.io/hostnetwork NotIn ["true"]`, so it is
// never scheduled onto a node of a hostNetwork NodePool, as yurt-manager's pod webhook does
// (pkg/yurtmanager/webhook/pod/v1alpha1/pod_default.go). Pure; called by admission/webhook.cc.
// Thread-safe.
//
// Where the requirement goes (docs/pool-admission.md, "The pod mutation"):
//   - no required node affinity (no affinity, no nodeAffinity, only preferred terms, or
//     nodeSelectorTerms null or []): one term holding the requirement is created;
//   - otherwise it is appended to every term, as terms are ORed and a term without it would let
//     the pod onto a hostNetwork node; a term that already holds it (NotIn with "true" among its
//     values) is left as it is, so a re-invoked webhook adds nothing;
//   - a term with no requirement at all (`{}`) matches no node: it is left alone, since adding the
//     requirement would widen it to every node outside hostNetwork pools (upstream adds it);
//   - a pod with spec.hostNetwork true is left alone: it runs on the host anyway, and its
//     containerPorts without hostPort are valid (Kubernetes defaults hostPort to containerPort
//     for hostNetwork pods; OpenKruise 1.7's template validation got this wrong).
#pragma once

#include <string>

#include <rapidjson/document.h>

namespace yurthub::admission {

inline constexpr const char* kExcludeHostNetworkAnnotation =
    "apps.openyurt.io/exclude-host-network-pool";
inline constexpr const char* kHostNetworkLabel = "nodepool.openyurt.io/hostnetwork";

// The JSON Patch (RFC 6902, as text) that adds the requirement to `pod`, or "" when the pod is
// to be admitted unchanged: not annotated "true", hostNetwork, already excluded in every term,
// or so malformed (spec or affinity not an object) that the apiserver's validation will refuse it
// anyway.
std::string host_network_exclusion_patch(const rapidjson::Value& pod);

}  // namespace yurthub::admission
