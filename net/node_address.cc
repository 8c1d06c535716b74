// Finding the node's address from its default route with rtnetlink; see node_address.h.
#include "net/node_address.h"

#include <arpa/inet.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include <algorithm>
#include <cstring>

#include "net/rtnetlink.h"

namespace yurthub::net {
namespace {

// The attributes after a message's fixed part of `fixed` bytes, or nullopt if it is too short.
std::optional<std::pair<const rtattr*, int>> attributes(const nlmsghdr& m, std::size_t fixed) {
  if (m.nlmsg_len < NLMSG_LENGTH(fixed)) return std::nullopt;
  const char* start = static_cast<const char*>(NLMSG_DATA(&m)) + NLMSG_ALIGN(fixed);
  const int len = static_cast<int>(m.nlmsg_len) - static_cast<int>(NLMSG_SPACE(fixed));
  return std::make_pair(reinterpret_cast<const rtattr*>(start), len < 0 ? 0 : len);
}

std::optional<std::uint32_t> u32(const rtattr* a) {
  if (RTA_PAYLOAD(a) < sizeof(std::uint32_t)) return std::nullopt;
  std::uint32_t v = 0;
  std::memcpy(&v, RTA_DATA(a), sizeof v);
  return v;
}

// The first next hop's interface of RTA_MULTIPATH (an ECMP default route has no RTA_OIF).
int first_hop_interface(const rtattr* multipath) {
  if (RTA_PAYLOAD(multipath) < sizeof(rtnexthop)) return 0;
  rtnexthop hop{};
  std::memcpy(&hop, RTA_DATA(multipath), sizeof hop);
  return hop.rtnh_ifindex;
}

bool usable(const InterfaceAddress& a) {
  // Not yet or no longer the node's: duplicate detection running or failed, lifetime over.
  constexpr std::uint32_t kUnusable = IFA_F_TENTATIVE | IFA_F_DADFAILED | IFA_F_DEPRECATED;
  return a.scope == RT_SCOPE_UNIVERSE && (a.flags & kUnusable) == 0;
}

Status dump(RtNetlink& nl, NetlinkRequest& request, const RtNetlink::OnMessage& on_message,
            const char* what) {
  auto answer = nl.transact(request, on_message);
  if (!answer)
    return make_error(std::string("reading the ") + what + ": " + answer.error().message);
  if (*answer != 0) {
    return make_error(std::string("reading the ") + what + ": " + std::strerror(*answer));
  }
  return {};
}

}  // namespace

bool read_route_message(const nlmsghdr& m, std::vector<DefaultRoute>& routes) {
  if (m.nlmsg_type != RTM_NEWROUTE) return true;
  auto attrs = attributes(m, sizeof(rtmsg));
  if (!attrs) return false;
  const auto* rtm = static_cast<const rtmsg*>(NLMSG_DATA(&m));
  if (rtm->rtm_dst_len != 0 || rtm->rtm_type != RTN_UNICAST) return true;
  if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6) return true;
  std::uint32_t table = rtm->rtm_table;
  DefaultRoute route;
  route.family = rtm->rtm_family;
  auto [a, len] = *attrs;
  for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
    switch (a->rta_type) {
      case RTA_TABLE:  // the whole table id, when it does not fit rtm_table
        if (auto v = u32(a)) table = *v;
        break;
      case RTA_OIF:
        if (auto v = u32(a)) route.interface_index = static_cast<int>(*v);
        break;
      case RTA_PRIORITY:
        if (auto v = u32(a)) route.metric = *v;
        break;
      case RTA_MULTIPATH:
        if (route.interface_index == 0) route.interface_index = first_hop_interface(a);
        break;
      default:
        break;
    }
  }
  if (table == RT_TABLE_MAIN && route.interface_index > 0) routes.push_back(route);
  return true;
}

bool read_interface_address_message(const nlmsghdr& m, std::vector<InterfaceAddress>& addresses) {
  if (m.nlmsg_type != RTM_NEWADDR) return true;
  auto attrs = attributes(m, sizeof(ifaddrmsg));
  if (!attrs) return false;
  const auto* ifa = static_cast<const ifaddrmsg*>(NLMSG_DATA(&m));
  if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6) return true;
  InterfaceAddress out;
  out.family = ifa->ifa_family;
  out.interface_index = static_cast<int>(ifa->ifa_index);
  out.scope = ifa->ifa_scope;
  out.flags = ifa->ifa_flags;
  const std::size_t size = out.family == AF_INET ? 4 : 16;
  const rtattr* local = nullptr;
  const rtattr* address = nullptr;
  auto [a, len] = *attrs;
  for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
    if (a->rta_type == IFA_LOCAL) local = a;
    if (a->rta_type == IFA_ADDRESS) address = a;
    if (a->rta_type == IFA_FLAGS) {
      if (auto v = u32(a)) out.flags = *v;
    }
  }
  // IFA_LOCAL is the interface's own IPv4 address (IFA_ADDRESS is the peer's on a point-to-point
  // link); IPv6 has only IFA_ADDRESS.
  const rtattr* own = local ? local : address;
  if (!own) return true;
  if (RTA_PAYLOAD(own) != size) return false;
  char text[INET6_ADDRSTRLEN] = {};
  if (!inet_ntop(out.family, RTA_DATA(own), text, sizeof text)) return false;
  out.address = text;
  addresses.push_back(std::move(out));
  return true;
}

std::optional<NodeAddress> choose_node_address(const std::vector<DefaultRoute>& routes,
                                               const std::vector<InterfaceAddress>& addresses) {
  for (int family : {AF_INET, AF_INET6}) {
    std::vector<DefaultRoute> candidates;
    for (const auto& r : routes) {
      if (r.family == family) candidates.push_back(r);
    }
    // Stable: among equal metrics the kernel's order (the one it would use first) is kept.
    std::stable_sort(
        candidates.begin(), candidates.end(),
        [](const DefaultRoute& a, const DefaultRoute& b) { return a.metric < b.metric; });
    for (const auto& route : candidates) {
      for (const auto& a : addresses) {
        if (a.family == family && a.interface_index == route.interface_index && usable(a)) {
          return NodeAddress{a.address, route.interface_index, ""};
        }
      }
    }
  }
  return std::nullopt;
}

Result<std::optional<NodeAddress>> find_node_address(std::chrono::milliseconds timeout) {
  auto nl = RtNetlink::open(timeout);
  if (!nl) return make_error("finding the node's address: " + nl.error().message);
  std::vector<DefaultRoute> routes;
  for (int family : {AF_INET, AF_INET6}) {
    rtmsg rtm{};
    rtm.rtm_family = static_cast<unsigned char>(family);
    NetlinkRequest request(RTM_GETROUTE, NLM_F_DUMP, &rtm, sizeof rtm);
    if (Status ok = dump(
            *nl, request, [&](const nlmsghdr& m) { return read_route_message(m, routes); },
            "routing table");
        !ok) {
      return ok.error();
    }
  }
  if (routes.empty()) return std::optional<NodeAddress>();
  std::vector<InterfaceAddress> addresses;
  ifaddrmsg ifa{};
  ifa.ifa_family = AF_UNSPEC;
  NetlinkRequest request(RTM_GETADDR, NLM_F_DUMP, &ifa, sizeof ifa);
  if (Status ok = dump(
          *nl, request,
          [&](const nlmsghdr& m) { return read_interface_address_message(m, addresses); },
          "interface addresses");
      !ok) {
    return ok.error();
  }
  auto chosen = choose_node_address(routes, addresses);
  if (chosen) {
    char name[IF_NAMESIZE] = {};
    if (if_indextoname(static_cast<unsigned>(chosen->interface_index), name)) {
      chosen->interface_name = name;
    }
  }
  return chosen;
}

}  // namespace yurthub::net
