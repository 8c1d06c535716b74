// The node's own IP address as kubelet and YurtHub default it (k8s.io/apimachinery's
// utilnet.ChooseHostInterface, which YurtHub's --node-ip default uses): the global address of
// the interface the default route goes through, IPv4 first, IPv6 on IPv6-only nodes. Read from
// the kernel with rtnetlink (net/rtnetlink.h): a dump of the main routing table for its default
// routes, lowest metric first, then a dump of the addresses for that route's interface. Called
// once at start by hub/node_ip.cc (when --node-ip is not given). Blocking: two or four netlink
// round trips, each bounded by `timeout`.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

struct nlmsghdr;  // <linux/netlink.h>

namespace yurthub::net {

// A default route (destination length 0) of the main table, as RTM_GETROUTE's dump has it.
struct DefaultRoute {
  int family = 0;            // AF_INET or AF_INET6
  int interface_index = 0;   // RTA_OIF, or the first next hop's of a multipath route
  std::uint32_t metric = 0;  // RTA_PRIORITY; 0 when absent
};

// One address of an interface, as RTM_GETADDR's dump has it.
struct InterfaceAddress {
  int family = 0;
  int interface_index = 0;
  unsigned char scope = 0;  // RT_SCOPE_UNIVERSE (0) is global
  std::uint32_t flags = 0;  // IFA_F_* (IFA_FLAGS when present, it has the bits past 8)
  std::string address;      // text, as inet_ntop writes it
};

struct NodeAddress {
  std::string address;
  int interface_index = 0;
  std::string interface_name;  // filled by find_node_address(), for the log
};

// One message of RTM_GETROUTE's dump: appends it to `routes` when it is a unicast default route
// of the main table with an interface. False when the message is malformed.
bool read_route_message(const nlmsghdr& m, std::vector<DefaultRoute>& routes);
// One message of RTM_GETADDR's dump: appends its address to `addresses`. False when malformed.
bool read_interface_address_message(const nlmsghdr& m, std::vector<InterfaceAddress>& addresses);

// The node's address among what the dumps said: for IPv4, then IPv6, the default routes of that
// family by ascending metric, and the first global address of that family on the route's
// interface that is usable (not tentative, deprecated or failed duplicate detection). nullopt
// when no default route has one.
std::optional<NodeAddress> choose_node_address(const std::vector<DefaultRoute>& routes,
                                               const std::vector<InterfaceAddress>& addresses);

// Asks the kernel (the calling process's network namespace): nullopt when there is no default
// route with a global address; an Error when netlink failed.
Result<std::optional<NodeAddress>> find_node_address(
    std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

}  // namespace yurthub::net
