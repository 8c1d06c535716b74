// What the node's identity may write; see node_authority.h. The rules and texts are kube-apiserver
// v1.26's: plugin/pkg/auth/authorizer/node/node_authorizer.go (reasons), bootstrappolicy's
// NodeRules() (the static rules), plugin/pkg/admission/noderestriction/admission.go (admission
// texts) and k8s.io/apiserver's responsewriters.forbiddenMessage (the message's first part).
#include "cache/node_authority.h"

#include <algorithm>
#include <memory>
#include <set>
#include <vector>

namespace yurthub::cache {
namespace {

using rapidjson::Value;

constexpr std::string_view kLeaseNamespace = "kube-node-lease";

using kube::Verb;

template <class T>
bool one_of(const T& value, std::initializer_list<T> set) {
  return std::find(set.begin(), set.end(), value) != set.end();
}

const Value* member(const Value* object, const char* name) {
  if (object == nullptr || !object->IsObject()) return nullptr;
  auto it = object->FindMember(name);
  return it == object->MemberEnd() || it->value.IsNull() ? nullptr : &it->value;
}

std::string string_at(const Value& object, const char* a, const char* b) {
  const Value* v = member(member(&object, a), b);
  return v && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : "";
}

// A JSON value or null, for equality: absent, null and (for maps and lists) empty compare equal,
// as Go compares nil and empty maps and slices after decoding.
bool same(const Value* a, const Value* b) {
  const bool a_empty =
      a == nullptr || (a->IsObject() && a->MemberCount() == 0) || (a->IsArray() && a->Empty());
  const bool b_empty =
      b == nullptr || (b->IsObject() && b->MemberCount() == 0) || (b->IsArray() && b->Empty());
  if (a_empty || b_empty) return a_empty == b_empty;
  return *a == *b;
}

// Keys added, removed or changed between two label maps (getModifiedLabels).
std::set<std::string> modified_labels(const Value* before, const Value* after) {
  std::set<std::string> keys;
  auto visit = [&](const Value* from, const Value* to) {
    if (from == nullptr || !from->IsObject()) return;
    for (const auto& m : from->GetObject()) {
      const Value* other = member(to, m.name.GetString());
      if (other == nullptr || !(*other == m.value)) keys.insert(m.name.GetString());
    }
  };
  visit(before, after);
  visit(after, before);
  return keys;
}

std::string sanitized(std::string_view text) {
  // responsewriters.Forbidden escapes these before writing the message.
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

bool ends_with_label_namespace(std::string_view prefix, std::string_view ns) {
  return prefix == ns || (prefix.size() > ns.size() && prefix.ends_with(ns) &&
                          prefix[prefix.size() - ns.size() - 1] == '.');
}

// NodeRules(): whether the authorizer allows the node this write statically.
bool node_rules_allow(const kube::RequestInfo& info) {
  const std::string& g = info.api_group;
  const std::string& r = info.resource;
  const std::string& sub = info.subresource;
  const Verb verb = info.verb;
  const bool create = verb == Verb::Create;
  bool allowed = false;
  if (g.empty() && r == "nodes") {
    allowed = sub.empty() ? one_of(verb, {Verb::Create, Verb::Update, Verb::Patch})
                          : sub == "status" && one_of(verb, {Verb::Update, Verb::Patch});
  } else if (g.empty() && r == "pods") {
    allowed = sub.empty()         ? one_of(verb, {Verb::Create, Verb::Delete})
              : sub == "status"   ? one_of(verb, {Verb::Update, Verb::Patch})
              : sub == "eviction" ? create
                                  : false;
  } else if (g.empty() && r == "events") {
    allowed = sub.empty() && one_of(verb, {Verb::Create, Verb::Update, Verb::Patch});
  } else if ((g == "certificates.k8s.io" && r == "certificatesigningrequests") ||
             (g == "authentication.k8s.io" &&
              one_of<std::string_view>(r, {"tokenreviews", "selfsubjectreviews"})) ||
             (g == "authorization.k8s.io" &&
              one_of<std::string_view>(r,
                                       {"subjectaccessreviews", "localsubjectaccessreviews",
                                        "selfsubjectaccessreviews", "selfsubjectrulesreviews"}))) {
    allowed = create && sub.empty();
  }
  return allowed;
}

}  // namespace

bool is_forbidden_node_label(std::string_view key) {
  const auto slash = key.find('/');
  const std::string_view prefix = slash == std::string_view::npos ? "" : key.substr(0, slash);
  if (ends_with_label_namespace(prefix, "node-restriction.kubernetes.io")) return true;
  const bool kubernetes_namespace = ends_with_label_namespace(prefix, "kubernetes.io") ||
                                    ends_with_label_namespace(prefix, "k8s.io");
  if (!kubernetes_namespace) return false;
  // kubeletapis.IsKubeletLabel
  static const std::set<std::string_view, std::less<>> kKubeletLabels = {
      "kubernetes.io/hostname",
      "topology.kubernetes.io/zone",
      "topology.kubernetes.io/region",
      "failure-domain.beta.kubernetes.io/zone",
      "failure-domain.beta.kubernetes.io/region",
      "beta.kubernetes.io/instance-type",
      "node.kubernetes.io/instance-type",
      "kubernetes.io/os",
      "kubernetes.io/arch",
      "beta.kubernetes.io/os",
      "beta.kubernetes.io/arch"};
  if (kKubeletLabels.contains(key)) return false;
  return !ends_with_label_namespace(prefix, "kubelet.kubernetes.io") &&
         !ends_with_label_namespace(prefix, "node.kubernetes.io");
}

kube::ApiError NodeAuthority::denied(const kube::RequestInfo& info, std::string_view why) const {
  // responsewriters.forbiddenMessage: the resource with its subresource, the scope.
  std::string resource = info.resource;
  if (!info.subresource.empty()) resource += "/" + info.subresource;
  std::string message = "User \"" + user() + "\" cannot " +
                        std::string(kube::verb_name(info.verb)) + " resource \"" + resource +
                        "\" in API group \"" + info.api_group + "\"";
  message += info.namespace_name.empty() ? " at the cluster scope"
                                         : " in the namespace \"" + info.namespace_name + "\"";
  if (!why.empty()) message += ": " + std::string(why);
  return kube::forbidden_error({info.name, info.api_group, info.resource}, sanitized(message));
}

kube::ApiError NodeAuthority::admission(const kube::RequestInfo& info, std::string_view name,
                                        std::string_view why) const {
  return kube::forbidden_error({std::string(name), info.api_group, info.resource}, why);
}

std::optional<kube::ApiError> NodeAuthority::authorize(const kube::RequestInfo& info,
                                                       std::string_view create_name) const {
  if (!info.is_resource_request || !kube::is_write_verb(info.verb)) return std::nullopt;
  const std::string_view name =
      info.verb == Verb::Create ? create_name : std::string_view(info.name);
  if (auto decision = decided_by_node_authorizer(info, name)) return *decision;
  if (!node_rules_allow(info)) return denied(info, "");
  // NodeRestriction admitNode: only its own Node, whatever the subresource.
  if (info.api_group.empty() && info.resource == "nodes" && name != node_) {
    return admission(
        info, name,
        "node \"" + node_ + "\" is not allowed to modify node \"" + std::string(name) + "\"");
  }
  return std::nullopt;
}

std::optional<NodeAuthority::Decision> NodeAuthority::decided_by_node_authorizer(
    const kube::RequestInfo& info, std::string_view name) const {
  const std::string& g = info.api_group;
  const std::string& r = info.resource;
  const std::string& sub = info.subresource;
  const Verb verb = info.verb;
  const bool create = verb == Verb::Create;
  if (g.empty() && (r == "secrets" || r == "configmaps")) {
    return denied(info, "can only read resources of this type");
  }
  if ((g.empty() &&
       (r == "persistentvolumes" || (r == "persistentvolumeclaims" && sub != "status"))) ||
      (g == "storage.k8s.io" && r == "volumeattachments") ||
      (g == "resource.k8s.io" && r == "resourceclaims")) {
    return denied(info, "can only get individual resources of this type");
  }
  if (g.empty() && r == "persistentvolumeclaims") {
    if (verb != Verb::Update && verb != Verb::Patch)
      return denied(info, "can only get/update/patch this type");
    return Decision{};  // the claim -> pod -> node edge is checked with the cache, if at all
  }
  if (g.empty() && r == "serviceaccounts") {
    if (!create || info.name.empty()) {
      return denied(info, "can only create tokens for individual service accounts");
    }
    if (sub != "token") return denied(info, "can only create token subresource of serviceaccount");
    return Decision{};  // the serviceaccount -> pod -> node edge: admit_token_request
  }
  if (g == "coordination.k8s.io" && r == "leases") {
    if (!one_of(verb, {Verb::Create, Verb::Update, Verb::Patch, Verb::Delete})) {
      return denied(info, "can only get, create, update, patch, or delete a node lease");
    }
    if (info.namespace_name != kLeaseNamespace) {
      return denied(info, "can only access leases in the \"kube-node-lease\" system namespace");
    }
    if (name != node_) {
      constexpr std::string_view kWhy =
          "can only access node lease with the same name as the requesting node";
      return create ? admission(info, name, kWhy) : denied(info, kWhy);
    }
    return Decision{};
  }
  if (g == "storage.k8s.io" && r == "csinodes") {
    if (!one_of(verb, {Verb::Create, Verb::Update, Verb::Patch, Verb::Delete})) {
      return denied(info, "can only get, create, update, patch, or delete a CSINode");
    }
    if (!sub.empty()) return denied(info, "cannot authorize CSINode subresources");
    if (name != node_) {
      constexpr std::string_view kWhy =
          "can only access CSINode with the same name as the requesting node";
      return create ? admission(info, name, kWhy) : denied(info, kWhy);
    }
    return Decision{};
  }
  return std::nullopt;  // not one of its types
}

std::optional<kube::ApiError> NodeAuthority::admit_node(const kube::RequestInfo& info,
                                                        const Value& before,
                                                        const Value& after) const {
  const std::string quoted_node = "\"" + node_ + "\"";
  const Value* source = member(member(&after, "spec"), "configSource");
  if (source != nullptr && !same(source, member(member(&before, "spec"), "configSource"))) {
    return admission(info, info.name,
                     "node " + quoted_node +
                         " is not allowed to update configSource to a new non-nil configSource");
  }
  if (!same(member(member(&before, "spec"), "taints"), member(member(&after, "spec"), "taints"))) {
    return admission(info, info.name, "node " + quoted_node + " is not allowed to modify taints");
  }
  std::vector<std::string> forbidden;
  for (const std::string& key : modified_labels(member(member(&before, "metadata"), "labels"),
                                                member(member(&after, "metadata"), "labels"))) {
    if (is_forbidden_node_label(key)) forbidden.push_back(key);
  }
  if (!forbidden.empty()) {
    std::string list;
    for (const std::string& key : forbidden) list += (list.empty() ? "" : ", ") + key;
    // Upstream's text has no node name here.
    return admission(info, info.name, "is not allowed to modify labels: " + list);
  }
  return std::nullopt;
}

std::optional<kube::ApiError> NodeAuthority::admit_update(const kube::RequestInfo& info,
                                                          const Value& before,
                                                          const Value& after) const {
  if (info.api_group.empty() && info.resource == "nodes") return admit_node(info, before, after);
  if (info.api_group.empty() && info.resource == "persistentvolumeclaims" &&
      info.subresource == "status") {
    return admit_claim_status(info, before, after);
  }
  if (info.api_group.empty() && info.resource == "pods" && info.subresource == "status") {
    const std::string quoted_node = "\"" + node_ + "\"";
    if (string_at(before, "spec", "nodeName") != node_) {
      return admission(info, info.name,
                       "node " + quoted_node +
                           " can only update pod status for pods with spec.nodeName set to itself");
    }
    if (!same(member(member(&before, "metadata"), "labels"),
              member(member(&after, "metadata"), "labels"))) {
      return admission(info, info.name,
                       "node " + quoted_node + " cannot update labels through pod status");
    }
  }
  return std::nullopt;
}

// NodeRestriction admitPVCStatus: the node may change a claim's status.conditions (and what
// volume expansion records: allocatedResources, resizeStatus), nothing else.
std::optional<kube::ApiError> NodeAuthority::admit_claim_status(const kube::RequestInfo& info,
                                                                const Value& before,
                                                                const Value& after) const {
  auto comparable = [](const Value& claim) {
    auto copy = std::make_unique<rapidjson::Document>();
    copy->CopyFrom(claim, copy->GetAllocator());
    if (auto m = copy->FindMember("metadata"); m != copy->MemberEnd() && m->value.IsObject()) {
      m->value.RemoveMember("resourceVersion");
      m->value.RemoveMember("managedFields");
    }
    if (auto s = copy->FindMember("status"); s != copy->MemberEnd() && s->value.IsObject()) {
      for (const char* field : {"conditions", "allocatedResources", "resizeStatus"})
        s->value.RemoveMember(field);
    }
    return copy;
  };
  if (*comparable(before) == *comparable(after)) return std::nullopt;
  return admission(
      info, info.name,
      "node \"" + node_ + "\" is not allowed to update fields other than status.conditions");
}

bool NodeAuthority::runs_as(const Value& pod, std::string_view service_account) const {
  std::string account = string_at(pod, "spec", "serviceAccountName");
  if (account.empty()) account = "default";
  return string_at(pod, "spec", "nodeName") == node_ && account == service_account;
}

std::optional<kube::ApiError> NodeAuthority::admit_token_request(const kube::RequestInfo& info,
                                                                 const BoundObject& bound,
                                                                 const Value* pod) const {
  // The authorizer's edge first: a pod on this node runs as the service account.
  if (pod == nullptr || !runs_as(*pod, info.name)) {
    return denied(info, "no relationship found between node '" + node_ + "' and this object");
  }
  if (bound.kind != "Pod" || bound.api_version != "v1" || bound.name.empty()) {
    return admission(info, info.name, "node requested token not bound to a pod");
  }
  if (bound.uid.empty()) {
    return admission(info, info.name, "node requested token with a pod binding without a uid");
  }
  if (string_at(*pod, "metadata", "uid") != bound.uid) {
    return admission(info, info.name,
                     "the UID in the bound object reference (" + bound.uid +
                         ") does not match the UID in record. The object might have been deleted "
                         "and then recreated");
  }
  if (string_at(*pod, "spec", "nodeName") != node_) {
    return admission(info, info.name,
                     "node requested token bound to a pod scheduled on a different node");
  }
  return std::nullopt;
}

}  // namespace yurthub::cache
