// The resource table; see resources.h. Rows mirror what a v1.26 apiserver publishes in
// api-v1.body / apis-discovery-v1.body (test/testdata/fixtures/apiserver-v1.26), trimmed to the
// resources the hub and its tests touch, plus OpenYurt's NodePool CRD.
#include "test/fake_apiserver/resources.h"

#include <algorithm>

namespace yurthub::fake {
namespace {

using Verbs = std::vector<std::string_view>;

const Verbs kAllVerbs = {"create", "delete", "deletecollection", "get",
                         "list",   "patch",  "update",           "watch"};
const Verbs kStatusVerbs = {"get", "patch", "update"};

std::vector<ResourceInfo> build_table() {
  std::vector<ResourceInfo> t;
  t.push_back({.group = "",
               .versions = {"v1"},
               .name = "configmaps",
               .singular = "configmap",
               .namespaced = true,
               .kind = "ConfigMap",
               .verbs = kAllVerbs,
               .short_names = {"cm"}});
  t.push_back({.group = "",
               .versions = {"v1"},
               .name = "endpoints",
               .singular = "endpoints",
               .namespaced = true,
               .kind = "Endpoints",
               .verbs = kAllVerbs,
               .short_names = {"ep"}});
  t.push_back({.group = "",
               .versions = {"v1"},
               .name = "events",
               .singular = "event",
               .namespaced = true,
               .kind = "Event",
               .verbs = kAllVerbs,
               .short_names = {"ev"}});
  t.push_back({.group = "",
               .versions = {"v1"},
               .name = "namespaces",
               .singular = "namespace",
               .namespaced = false,
               .kind = "Namespace",
               .verbs = {"create", "delete", "get", "list", "patch", "update", "watch"},
               .short_names = {"ns"},
               .subresources = {{"status", "Namespace", kStatusVerbs}},
               .has_status = true});
  t.push_back({.group = "",
               .versions = {"v1"},
               .name = "nodes",
               .singular = "node",
               .namespaced = false,
               .kind = "Node",
               .verbs = kAllVerbs,
               .short_names = {"no"},
               .subresources = {{"status", "Node", kStatusVerbs}},
               .has_status = true});
  t.push_back({.group = "",
               .versions = {"v1"},
               .name = "pods",
               .singular = "pod",
               .namespaced = true,
               .kind = "Pod",
               .verbs = kAllVerbs,
               .short_names = {"po"},
               .categories = {"all"},
               .subresources = {{"exec", "PodExecOptions", {"create", "get"}},
                                {"log", "Pod", {"get"}},
                                {"status", "Pod", kStatusVerbs}},
               .has_status = true});
  t.push_back({.group = "",
               .versions = {"v1"},
               .name = "secrets",
               .singular = "secret",
               .namespaced = true,
               .kind = "Secret",
               .verbs = kAllVerbs});
  t.push_back({.group = "",
               .versions = {"v1"},
               .name = "serviceaccounts",
               .singular = "serviceaccount",
               .namespaced = true,
               .kind = "ServiceAccount",
               .verbs = kAllVerbs,
               .short_names = {"sa"},
               .subresources = {{"token", "TokenRequest", {"create"}}}});
  t.push_back({.group = "",
               .versions = {"v1"},
               .name = "services",
               .singular = "service",
               .namespaced = true,
               .kind = "Service",
               .verbs = kAllVerbs,
               .short_names = {"svc"},
               .categories = {"all"},
               .subresources = {{"status", "Service", kStatusVerbs}},
               .has_status = true});
  t.push_back({.group = "coordination.k8s.io",
               .versions = {"v1"},
               .name = "leases",
               .singular = "lease",
               .namespaced = true,
               .kind = "Lease",
               .verbs = kAllVerbs});
  // What kubelet lists and writes when it starts (its CSI plugin, RuntimeClass manager).
  t.push_back({.group = "node.k8s.io",
               .versions = {"v1"},
               .name = "runtimeclasses",
               .singular = "runtimeclass",
               .namespaced = false,
               .kind = "RuntimeClass",
               .verbs = kAllVerbs});
  t.push_back({.group = "storage.k8s.io",
               .versions = {"v1"},
               .name = "csidrivers",
               .singular = "csidriver",
               .namespaced = false,
               .kind = "CSIDriver",
               .verbs = kAllVerbs});
  t.push_back({.group = "storage.k8s.io",
               .versions = {"v1"},
               .name = "csinodes",
               .singular = "csinode",
               .namespaced = false,
               .kind = "CSINode",
               .verbs = kAllVerbs});
  t.push_back({.group = "discovery.k8s.io",
               .versions = {"v1"},
               .name = "endpointslices",
               .singular = "endpointslice",
               .namespaced = true,
               .kind = "EndpointSlice",
               .verbs = kAllVerbs});
  t.push_back({.group = "events.k8s.io",
               .versions = {"v1"},
               .name = "events",
               .singular = "event",
               .namespaced = true,
               .kind = "Event",
               .verbs = kAllVerbs,
               .short_names = {"ev"}});
  // A CRD: the apiserver orders versions by Kubernetes version priority, so v1beta2 is preferred.
  t.push_back({.group = "apps.openyurt.io",
               .versions = {"v1beta2", "v1beta1"},
               .name = "nodepools",
               .singular = "nodepool",
               .namespaced = false,
               .kind = "NodePool",
               .verbs = kAllVerbs,
               .short_names = {"np"},
               .subresources = {{"status", "NodePool", kStatusVerbs}},
               .has_status = true,
               .crd = true});
  t.push_back({.group = "authentication.k8s.io",
               .versions = {"v1"},
               .name = "selfsubjectreviews",
               .singular = "selfsubjectreview",
               .namespaced = false,
               .kind = "SelfSubjectReview",
               .verbs = {"create"},
               .stored = false});
  t.push_back({.group = "authorization.k8s.io",
               .versions = {"v1"},
               .name = "selfsubjectaccessreviews",
               .singular = "selfsubjectaccessreview",
               .namespaced = false,
               .kind = "SelfSubjectAccessReview",
               .verbs = {"create"},
               .stored = false});
  // certificates.k8s.io/v1 as in a v1.26 apiserver's discovery: approval is the subresource
  // `kubectl certificate approve` writes; status is what the signer writes.
  t.push_back({.group = "certificates.k8s.io",
               .versions = {"v1"},
               .name = "certificatesigningrequests",
               .singular = "certificatesigningrequest",
               .namespaced = false,
               .kind = "CertificateSigningRequest",
               .verbs = kAllVerbs,
               .short_names = {"csr"},
               .subresources = {{"approval", "CertificateSigningRequest", kStatusVerbs},
                                {"status", "CertificateSigningRequest", kStatusVerbs}},
               .has_status = true});
  return t;
}

}  // namespace

std::string ResourceInfo::key() const {
  std::string k(group);
  k += '/';
  k += name;
  return k;
}

std::string ResourceInfo::qualified() const {
  std::string q(name);
  if (!group.empty()) {
    q += '.';
    q += group;
  }
  return q;
}

std::string ResourceInfo::api_version(std::string_view version) const {
  if (group.empty()) return std::string(version);
  std::string v(group);
  v += '/';
  v += version;
  return v;
}

bool ResourceInfo::serves(std::string_view version) const {
  return std::find(versions.begin(), versions.end(), version) != versions.end();
}

bool ResourceInfo::has_subresource(std::string_view sub) const {
  return std::any_of(subresources.begin(), subresources.end(),
                     [&](const SubresourceInfo& s) { return s.name == sub; });
}

const std::vector<ResourceInfo>& resource_table() {
  static const std::vector<ResourceInfo> table = build_table();
  return table;
}

const ResourceInfo* find_resource(std::string_view group, std::string_view version,
                                  std::string_view name) {
  for (const auto& r : resource_table()) {
    if (r.group == group && r.name == name && r.serves(version)) return &r;
  }
  return nullptr;
}

void split_api_version(std::string_view api_version, std::string_view& group,
                       std::string_view& version) {
  auto slash = api_version.find('/');
  if (slash == std::string_view::npos) {
    group = {};
    version = api_version;
  } else {
    group = api_version.substr(0, slash);
    version = api_version.substr(slash + 1);
  }
}

const ResourceInfo* find_resource_by_kind(std::string_view api_version, std::string_view kind) {
  std::string_view group, version;
  split_api_version(api_version, group, version);
  for (const auto& r : resource_table()) {
    if (r.group == group && r.kind == kind && r.serves(version)) return &r;
  }
  return nullptr;
}

}  // namespace yurthub::fake
