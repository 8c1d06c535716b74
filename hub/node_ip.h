// The --node-ip default, as YurtHub's: when the flag is not given, the address of the node's
// default-route interface (net/node_address.h), IPv4 first, IPv6 on IPv6-only nodes. It is a
// subjectAltName of the HTTPS port's serving certificate by CSR. Applied once by cmd/yurthub.cc
// right after the flags are parsed; an explicit --node-ip always wins, and a lookup that fails or
// finds nothing leaves it empty with a warning (the hub starts anyway: YurtHub exits there, but
// only pods' HTTPS clients miss the name, while kubelet would lose the whole hub).
#pragma once

#include <functional>
#include <optional>

#include "base/result.h"
#include "hub/options.h"
#include "net/node_address.h"

namespace yurthub::hub {

using NodeAddressLookup = std::function<Result<std::optional<net::NodeAddress>>()>;

// Sets options.node_ip from `lookup` when it is empty, logging the address and interface chosen
// or why there is none. Returns whether it set it.
bool default_node_ip(
    HubOptions& options, const NodeAddressLookup& lookup = [] { return net::find_node_address(); });

}  // namespace yurthub::hub
