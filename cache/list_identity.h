// ListIdentity: what one cached object set is: one component's list (and the watch that follows
// it) of one resource, in one namespace scope, with one label and field selector. Two lists of the
// same resource with different selectors are different identities, so neither overwrites the
// other (YurtHub #1963). Objects a component fetched with GET live in a per-resource "get" set.
// Every set belongs to the identity that obtained it online (its `owner`, cache/callers.h): the
// node, whose identity the hub lends to callers without a token, or a caller's own credential.
// The User-Agent (`component`) picks which of the owner's sets, never whose.
// key() is the Store's list-record key; its prefixes select an owner's component or resource.
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
  std::string owner = {};      // "" = the node; else cache/callers.h's owner of a credential

  static constexpr std::string_view kGetSet = "\x01get";

  bool is_get_set() const { return field_selector == kGetSet; }
  // Whether a key() may be a GET set's (it ends with kGetSet), without parsing it.
  static bool may_be_get_set_key(std::string_view key) { return key.ends_with(kGetSet); }
  // component \0 group \0 version \0 resource \0 namespace \0 label \0 field, after
  // kOwnerMark owner \0 when the owner is not the node (so a cache written before owners existed
  // reads as the node's, which is whose identity it was served with unless a caller sent a token).
  std::string key() const;
  static std::optional<ListIdentity> parse(std::string_view key);

  static constexpr char kOwnerMark = '\x02';

  // The GET set of this identity's resource.
  ListIdentity get_set() const;
  // The key() of the GET set of one owner's component's resource, without building the identity.
  static std::string get_set_key(std::string_view component, std::string_view group,
                                 std::string_view version, std::string_view resource,
                                 std::string_view owner = {});
  // Prefix of every identity of one owner's component ("kubelet\0" for the node's).
  static std::string component_prefix(std::string_view component, std::string_view owner = {});
  // Prefix of every identity of one owner's component's resource ("kubelet\0\0v1\0pods\0").
  static std::string resource_prefix(std::string_view component, std::string_view group,
                                     std::string_view version, std::string_view resource,
                                     std::string_view owner = {});
  // "kubelet pods.v1.core ns=default label=app=web field=spec.nodeName=n1" for logs and the CLI,
  // with " as <owner>" for a set that is not the node's.
  std::string describe() const;
  bool operator==(const ListIdentity&) const = default;
};

}  // namespace yurthub::cache
