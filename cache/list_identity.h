// ListIdentity: what one cached object set is: one component's list (and the watch that follows
// it) of one resource, in one namespace scope, with one label and field selector. Two lists of the
// same resource with different selectors are different identities, so neither overwrites the
// other (YurtHub #1963). Objects a component fetched with GET live in a per-resource "get" set.
// key() is the Store's list-record key; its prefixes select a component or a resource.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace yurthub::cache {

struct ListIdentity {
  std::string component;       // truncated User-Agent, e.g. "kubelet"
  std::string group;           // "" for the core group
  std::string version;         // "v1"
  std::string resource;        // "pods"
  std::string namespace_name;  // "" = all namespaces (or a cluster-scoped resource)
  std::string label_selector;  // canonical text (kube::LabelSelector::canonical)
  std::string field_selector;  // canonical text, or kGetSet for the set fed by GETs

  static constexpr std::string_view kGetSet = "\x01get";

  bool is_get_set() const { return field_selector == kGetSet; }
  // component \0 group \0 version \0 resource \0 namespace \0 label \0 field
  std::string key() const;
  static std::optional<ListIdentity> parse(std::string_view key);

  // The GET set of this identity's resource.
  ListIdentity get_set() const;
  // Prefix of every identity of one component ("kubelet\0").
  static std::string component_prefix(std::string_view component);
  // Prefix of every identity of one component's resource ("kubelet\0\0v1\0pods\0").
  static std::string resource_prefix(std::string_view component, std::string_view group,
                                     std::string_view version, std::string_view resource);
  // "kubelet pods.v1.core ns=default label=app=web field=spec.nodeName=n1" for logs and the CLI.
  std::string describe() const;
  bool operator==(const ListIdentity&) const = default;
};

}  // namespace yurthub::cache
