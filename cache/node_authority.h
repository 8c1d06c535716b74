// NodeAuthority: what kube-apiserver lets the node's own identity (`system:node:<node>`, group
// `system:nodes`: the hub's credentials, which kubelet borrows on the plain port) write, so that
// the hub never accepts offline a write the cloud would refuse. It emulates, for writes, the
// three things that decide in a v1.26 apiserver (docs/offline-semantics.md, "What the node may
// write"):
//   - the Node authorizer and the system:node rules it applies itself (NodeRules()): which verb on
//     which resource at all, leases and CSINodes only by the node's own name, tokens only for a
//     service account a pod bound to the node runs as;
//   - the NodeRestriction admission plugin on the objects: only its own Node (no taint change, no
//     label outside the kubelet's set), only the status of pods bound to it (labels unchanged), a
//     token bound to such a pod.
// Refusals are the apiserver's 403 Status, worded as it words them. Pure (objects come in as
// JSON); table-driven tests in test/cache/node_authority_test.cc. Called by the offline write
// path (cache/offline_writes.cc) for requests made with the hub's credentials.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "kube/request_info.h"
#include "kube/status.h"

namespace yurthub::cache {

class NodeAuthority {
 public:
  explicit NodeAuthority(std::string node) : node_(std::move(node)) {}

  const std::string& node() const { return node_; }

  // The authorizer's decision on the request line alone (verb, resource, subresource,
  // namespace, name). `create_name` is the created object's name (from the body), for creates.
  std::optional<kube::ApiError> authorize(const kube::RequestInfo& info,
                                          std::string_view create_name = {}) const;

  // NodeRestriction on an update or patch: the cached object before and the result after.
  std::optional<kube::ApiError> admit_update(const kube::RequestInfo& info,
                                             const rapidjson::Value& before,
                                             const rapidjson::Value& after) const;

  // NodeRestriction on a TokenRequest: the request's bound object and the cached pod it names
  // (null when the node has no such pod cached).
  struct BoundObject {
    std::string kind, api_version, name, uid;
  };
  std::optional<kube::ApiError> admit_token_request(const kube::RequestInfo& info,
                                                    const BoundObject& bound,
                                                    const rapidjson::Value* pod) const;

  // Whether `pod` (JSON) is bound to this node and runs as service account `name`: the Node
  // authorizer's serviceaccount -> pod -> node edge, which a token request needs.
  bool runs_as(const rapidjson::Value& pod, std::string_view service_account) const;

 private:
  std::string user() const { return "system:node:" + node_; }
  // An authorizer's answer: nullopt allows.
  using Decision = std::optional<kube::ApiError>;
  // The types the Node authorizer decides itself (node_authorizer.go Authorize): its decision,
  // or nullopt when `info` is not of one of them (then NodeRules() decide).
  std::optional<Decision> decided_by_node_authorizer(const kube::RequestInfo& info,
                                                     std::string_view name) const;
  kube::ApiError denied(const kube::RequestInfo& info, std::string_view why) const;
  kube::ApiError admission(const kube::RequestInfo& info, std::string_view name,
                           std::string_view why) const;
  std::optional<kube::ApiError> admit_claim_status(const kube::RequestInfo& info,
                                                   const rapidjson::Value& before,
                                                   const rapidjson::Value& after) const;
  std::optional<kube::ApiError> admit_node(const kube::RequestInfo& info,
                                           const rapidjson::Value& before,
                                           const rapidjson::Value& after) const;

  std::string node_;
};

// Labels a node may not set on itself (NodeRestriction's getForbiddenLabels): those under
// node-restriction.kubernetes.io, and those in a kubernetes.io or k8s.io namespace that are not
// kubelet labels (hostname, os, arch, zone, region, instance type, *.kubelet.kubernetes.io,
// *.node.kubernetes.io). Exposed for tests.
bool is_forbidden_node_label(std::string_view key);

}  // namespace yurthub::cache
