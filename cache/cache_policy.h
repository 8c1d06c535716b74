// CachePolicy: which components are cached (YurtHub's default cache agents plus the `cache_agents`
// key of ConfigMap kube-system/yurt-hub-cfg, reloaded live; "*" caches every component that sends
// a User-Agent) and which of their requests (docs/reference/yurthub.md §2.3, §2.4): resource get,
// list and watch, no subresource other than status, not the review and CSR kinds. Unlike YurtHub,
// any number of selectors per resource: each list is its own ListIdentity. Thread-safe (the agent
// set is an immutable snapshot swapped atomically).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cache/list_identity.h"
#include "kube/request_info.h"

namespace yurthub::cache {

class CachePolicy {
 public:
  // kubelet, kube-proxy, flanneld, coredns, raven-agent-ds, yurttunnel-agent, yurthub.
  static const std::vector<std::string>& default_agents();

  CachePolicy();
  // Applies the `cache_agents` value of yurt-hub-cfg (comma list, whitespace trimmed, "*" = all);
  // an absent key or deleted ConfigMap is "" (defaults only).
  void set_extra_agents(std::string_view cache_agents);
  // A component cached whatever yurt-hub-cfg says: the shared watch cache's own requests
  // (`multiplexer-proxy-<node>`), so that it starts from the node cache after an offline restart.
  void add_agent(std::string component);
  bool is_agent(std::string_view component) const;
  std::vector<std::string> agents() const;  // sorted, for logs; "*" if every component

  // Whether the response to this request is cached.
  bool cacheable(const kube::RequestInfo& info) const;
  // cacheable() for a resource request whose component is known to be an agent.
  static bool agent_request_cacheable(const kube::RequestInfo& info);
  // The object set a cacheable request reads or feeds. nullopt when a selector does not parse
  // (the apiserver will reject the request anyway).
  std::optional<ListIdentity> identity(const kube::RequestInfo& info) const;

 private:
  struct Agents {
    std::set<std::string, std::less<>> names;
    bool all = false;
  };
  std::shared_ptr<const Agents> snapshot() const;

  mutable std::mutex mutex_;  // guards agents_ (the pointer; the set itself is immutable)
  std::shared_ptr<const Agents> agents_;
  std::vector<std::string> always_;  // add_agent()'s
  std::string extra_;                // the last cache_agents value
};

// True for the discovery documents the cache keeps for offline use: /version, /api, /apis,
// /api/v1, /apis/<group>/<version>, and the service-account issuer's
// /.well-known/openid-configuration and /openid/v1/jwks.
bool is_cached_discovery_path(std::string_view path);

}  // namespace yurthub::cache
