// Where in-cluster clients reach this hub over HTTPS: the address masterservice,
// forwardkubesvctraffic and serviceenvupdater write into the kubernetes Service, its
// EndpointSlice and pods' environment. As YurtHub: --dummy-if-ip with --enable-dummy-if (the
// default; the hub creates that interface before it listens), else the HTTPS listener's address.
// Unlike YurtHub, the address is only used if this hub serves HTTPS there and, without the dummy
// interface, if the address is configured on one of the node's interfaces: rewriting pods to an
// address nobody serves would break every in-cluster client on the node. Called once by
// cmd/yurthub.cc.
#pragma once

#include <string>

namespace yurthub::filters {

struct HubAddress {
  std::string host;  // "" when none can be used; then `why` says why
  std::string why;
};

// The flags that decide the address (YurtHub's names), copied from the hub's options by cmd/.
struct HubAddressFlags {
  std::string bind_proxy_address;         // --bind-proxy-address
  std::string bind_proxy_secure_address;  // --bind-proxy-secure-address
  bool enable_dummy_if = true;            // --enable-dummy-if
  std::string dummy_if_ip;                // --dummy-if-ip
};

HubAddress in_cluster_hub_address(const HubAddressFlags& flags, bool https_served);

// Whether `address` (an IP literal) is configured on an interface of this machine.
bool is_local_address(const std::string& address);

}  // namespace yurthub::filters
