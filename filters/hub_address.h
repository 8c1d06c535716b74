// Where in-cluster clients reach this hub over HTTPS: the address masterservice,
// forwardkubesvctraffic and serviceenvupdater write into the kubernetes Service, its
// EndpointSlice and pods' environment. As YurtHub: --dummy-if-ip with --enable-dummy-if (the
// default), else the HTTPS listener's address. Unlike YurtHub, the address is only used if this
// hub serves HTTPS there and the address is configured on one of the node's interfaces (this hub
// does not create the dummy interface): rewriting pods to an address nobody serves would break every
// in-cluster client on the node. Called once by cmd/yurthub.cc.
#pragma once

#include <string>

#include "hub/options.h"

namespace yurthub::filters {

struct HubAddress {
  std::string host;  // "" when none can be used; then `why` says why
  std::string why;
};

HubAddress in_cluster_hub_address(const hub::HubOptions& options, bool https_served);

// Whether `address` (an IP literal) is configured on an interface of this machine.
bool is_local_address(const std::string& address);

}  // namespace yurthub::filters
