// The fake apiserver's static table of supported resources: one row per (group, resource) with
// what discovery publishes (kind, verbs, short names, subresources) and what the handlers need
// (namespaced, has a status subresource, CRD-style list items). Discovery documents, request
// routing and seed loading all read this one table. Immutable; safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace yurthub::fake {

struct SubresourceInfo {
  std::string_view name;  // "status", "exec", "log"
  std::string_view kind;
  std::vector<std::string_view> verbs;
};

struct ResourceInfo {
  std::string_view group;                  // "" for the core group
  std::vector<std::string_view> versions;  // served versions, preferred first
  std::string_view name;                   // plural, e.g. "pods"
  std::string_view singular;               // published only for CRDs (1.26 built-ins publish "")
  bool namespaced = true;
  std::string_view kind;
  std::vector<std::string_view> verbs;
  std::vector<std::string_view> short_names = {};
  std::vector<std::string_view> categories = {};
  std::vector<SubresourceInfo> subresources = {};
  bool has_status = false;  // PUT/PATCH on the main resource keep the stored status
  bool crd = false;         // list items keep kind/apiVersion, as for a CRD (unstructured)
  bool stored = true;       // false for virtual resources (selfsubjectreviews)

  // Storage key shared by all versions: "group/resource" ("/pods" for core).
  std::string key() const;
  // "pods", "leases.coordination.k8s.io": how Status messages name the resource.
  std::string qualified() const;
  // "v1", "apps.openyurt.io/v1beta1".
  std::string api_version(std::string_view version) const;
  bool serves(std::string_view version) const;
  bool has_subresource(std::string_view sub) const;
};

// All supported resources, in discovery order.
const std::vector<ResourceInfo>& resource_table();

// The row for (group, version, plural name), or nullptr.
const ResourceInfo* find_resource(std::string_view group, std::string_view version,
                                  std::string_view name);

// The row for an object's apiVersion ("v1", "g/v") and kind, or nullptr. Seed loading uses it.
const ResourceInfo* find_resource_by_kind(std::string_view api_version, std::string_view kind);

// Splits "g/v" into group and version ("v1" → "", "v1").
void split_api_version(std::string_view api_version, std::string_view& group,
                       std::string_view& version);

}  // namespace yurthub::fake
