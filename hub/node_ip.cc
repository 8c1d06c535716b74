// The --node-ip default; see node_ip.h.
#include "hub/node_ip.h"

#include "base/log.h"

namespace yurthub::hub {

bool default_node_ip(HubOptions& options, const NodeAddressLookup& lookup) {
  if (!options.node_ip.empty()) return false;
  auto found = lookup();
  if (!found) {
    YH_LOG(Warning) << "--node-ip not given and the node's address could not be read: "
                    << found.error().message << "; the serving certificate names no node IP";
    return false;
  }
  if (!*found) {
    YH_LOG(Warning) << "--node-ip not given and the node has no default route with a global "
                       "address; the serving certificate names no node IP";
    return false;
  }
  options.node_ip = (*found)->address;
  YH_LOG(Info) << "node ip is " << options.node_ip << " (interface "
               << ((*found)->interface_name.empty() ? std::to_string((*found)->interface_index)
                                                    : (*found)->interface_name)
               << ", the default route's; --node-ip overrides it)";
  return true;
}

}  // namespace yurthub::hub
