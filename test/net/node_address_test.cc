// The node's address (net/node_address.h): the readers of RTM_GETROUTE's and RTM_GETADDR's
// answers on messages laid out as the kernel sends them (built with NetlinkRequest), the choice
// among what they read, and the live lookup in fresh network namespaces (test/netns.h) with a
// veth pair and default routes set up by `ip`: IPv4 preferred, IPv6 on an IPv6-only namespace,
// nothing without a default route.
#include "net/node_address.h"

#include <arpa/inet.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "net/rtnetlink.h"
#include "test/netns.h"

namespace yurthub::net {
namespace {

struct RouteSpec {
  int family = AF_INET;
  unsigned char dst_len = 0;
  unsigned char type = RTN_UNICAST;
  std::uint32_t table = RT_TABLE_MAIN;
  std::optional<std::uint32_t> oif;
  std::optional<std::uint32_t> metric;
  std::optional<int> multipath_first_hop;
};

NetlinkRequest route_message(const RouteSpec& r) {
  rtmsg rtm{};
  rtm.rtm_family = static_cast<unsigned char>(r.family);
  rtm.rtm_dst_len = r.dst_len;
  rtm.rtm_type = r.type;
  rtm.rtm_table = static_cast<unsigned char>(r.table < 256 ? r.table : RT_TABLE_UNSPEC);
  NetlinkRequest m(RTM_NEWROUTE, NLM_F_MULTI, &rtm, sizeof rtm);
  m.add_attr(RTA_TABLE, &r.table, sizeof r.table);
  if (r.oif) m.add_attr(RTA_OIF, &*r.oif, sizeof *r.oif);
  if (r.metric) m.add_attr(RTA_PRIORITY, &*r.metric, sizeof *r.metric);
  if (r.multipath_first_hop) {
    rtnexthop hops[2]{};
    hops[0].rtnh_len = sizeof(rtnexthop);
    hops[0].rtnh_ifindex = *r.multipath_first_hop;
    hops[1].rtnh_len = sizeof(rtnexthop);
    hops[1].rtnh_ifindex = *r.multipath_first_hop + 1;
    m.add_attr(RTA_MULTIPATH, hops, sizeof hops);
  }
  return m;
}

std::vector<DefaultRoute> read_routes(const std::vector<RouteSpec>& specs) {
  std::vector<DefaultRoute> routes;
  for (const auto& spec : specs) {
    auto m = route_message(spec);
    EXPECT_TRUE(read_route_message(*m.header(), routes));
  }
  return routes;
}

NetlinkRequest address_message(int family, int index, const std::string& text,
                               unsigned char scope = RT_SCOPE_UNIVERSE, std::uint32_t flags = 0,
                               const std::string& peer = "") {
  ifaddrmsg ifa{};
  ifa.ifa_family = static_cast<unsigned char>(family);
  ifa.ifa_index = static_cast<unsigned>(index);
  ifa.ifa_scope = scope;
  ifa.ifa_flags = static_cast<unsigned char>(flags & 0xff);
  NetlinkRequest m(RTM_NEWADDR, NLM_F_MULTI, &ifa, sizeof ifa);
  unsigned char bytes[16] = {};
  inet_pton(family, text.c_str(), bytes);
  const std::size_t size = family == AF_INET ? 4 : 16;
  if (family == AF_INET) {
    unsigned char peer_bytes[4] = {};
    if (!peer.empty()) inet_pton(AF_INET, peer.c_str(), peer_bytes);
    m.add_attr(IFA_ADDRESS, peer.empty() ? bytes : peer_bytes, size);
    m.add_attr(IFA_LOCAL, bytes, size);
  } else {
    m.add_attr(IFA_ADDRESS, bytes, size);
  }
  m.add_attr(IFA_FLAGS, &flags, sizeof flags);
  return m;
}

std::vector<InterfaceAddress> read_addresses(std::vector<NetlinkRequest> messages) {
  std::vector<InterfaceAddress> out;
  for (auto& m : messages) EXPECT_TRUE(read_interface_address_message(*m.header(), out));
  return out;
}

std::string chosen(const std::vector<DefaultRoute>& routes,
                   const std::vector<InterfaceAddress>& addresses) {
  auto c = choose_node_address(routes, addresses);
  return c ? c->address + "@" + std::to_string(c->interface_index) : "none";
}

TEST(ReadRouteMessage, KeepsUnicastDefaultRoutesOfTheMainTableWithTheirInterfaceAndMetric) {
  constexpr std::nullopt_t none = std::nullopt;
  // family, destination length, type, table, RTA_OIF, RTA_PRIORITY, RTA_MULTIPATH's first hop
  const auto routes = read_routes({
      {AF_INET, 0, RTN_UNICAST, RT_TABLE_MAIN, 2, 100, none},
      {AF_INET6, 0, RTN_UNICAST, RT_TABLE_MAIN, 3, none, none},
      {AF_INET, 24, RTN_UNICAST, RT_TABLE_MAIN, 4, none, none},     // not a default route
      {AF_INET, 0, RTN_UNREACHABLE, RT_TABLE_MAIN, 5, none, none},  // no interface to name
      {AF_INET, 0, RTN_UNICAST, RT_TABLE_LOCAL, 6, none, none},     // the local table
      {AF_INET, 0, RTN_UNICAST, 1000, 7, none, none},               // a table past 255
      {AF_INET, 0, RTN_UNICAST, RT_TABLE_MAIN, none, 5, none},      // no interface
      {AF_INET, 0, RTN_UNICAST, RT_TABLE_MAIN, none, 7, 8},         // ECMP: the first next hop
  });
  ASSERT_EQ(routes.size(), 3u);
  EXPECT_EQ(routes[0].family, AF_INET);
  EXPECT_EQ(routes[0].interface_index, 2);
  EXPECT_EQ(routes[0].metric, 100u);
  EXPECT_EQ(routes[1].family, AF_INET6);
  EXPECT_EQ(routes[1].interface_index, 3);
  EXPECT_EQ(routes[1].metric, 0u);
  EXPECT_EQ(routes[2].interface_index, 8);
  EXPECT_EQ(routes[2].metric, 7u);
}

TEST(ReadRouteMessage, AMessageTooShortForItsFixedPartIsMalformed) {
  nlmsghdr h{};
  h.nlmsg_len = NLMSG_LENGTH(2);
  h.nlmsg_type = RTM_NEWROUTE;
  std::vector<DefaultRoute> routes;
  EXPECT_FALSE(read_route_message(h, routes));
  h.nlmsg_type = RTM_NEWLINK;  // not a route: not read at all
  EXPECT_TRUE(read_route_message(h, routes));
}

TEST(ReadInterfaceAddressMessage, TheOwnAddressScopeAndFlags) {
  std::vector<NetlinkRequest> messages;
  messages.push_back(address_message(AF_INET, 2, "10.0.0.5"));
  messages.push_back(address_message(AF_INET, 3, "10.8.0.2", RT_SCOPE_UNIVERSE, 0, "10.8.0.1"));
  messages.push_back(address_message(AF_INET6, 2, "fe80::1", RT_SCOPE_LINK));
  messages.push_back(address_message(AF_INET6, 2, "2001:db8::5", RT_SCOPE_UNIVERSE,
                                     IFA_F_TENTATIVE | IFA_F_STABLE_PRIVACY));
  const auto addresses = read_addresses(std::move(messages));
  ASSERT_EQ(addresses.size(), 4u);
  EXPECT_EQ(addresses[0].address, "10.0.0.5");
  EXPECT_EQ(addresses[1].address, "10.8.0.2");  // IFA_LOCAL, not the point-to-point peer
  EXPECT_EQ(addresses[2].scope, RT_SCOPE_LINK);
  EXPECT_EQ(addresses[3].address, "2001:db8::5");
  EXPECT_EQ(addresses[3].flags, IFA_F_TENTATIVE | IFA_F_STABLE_PRIVACY);  // past 8 bits
}

TEST(ReadInterfaceAddressMessage, AnAddressOfTheWrongSizeIsMalformed) {
  ifaddrmsg ifa{};
  ifa.ifa_family = AF_INET;
  NetlinkRequest m(RTM_NEWADDR, 0, &ifa, sizeof ifa);
  const unsigned char six[6] = {1, 2, 3, 4, 5, 6};
  m.add_attr(IFA_LOCAL, six, sizeof six);
  std::vector<InterfaceAddress> out;
  EXPECT_FALSE(read_interface_address_message(*m.header(), out));
}

TEST(ChooseNodeAddress, Table) {
  std::vector<NetlinkRequest> messages;
  messages.push_back(address_message(AF_INET, 1, "127.0.0.1", RT_SCOPE_HOST));
  messages.push_back(address_message(AF_INET, 2, "192.168.1.10"));
  messages.push_back(address_message(AF_INET, 2, "192.168.1.11"));
  messages.push_back(address_message(AF_INET, 3, "10.0.0.7"));
  messages.push_back(address_message(AF_INET6, 2, "fe80::2", RT_SCOPE_LINK));
  messages.push_back(address_message(AF_INET6, 2, "2001:db8::2"));
  messages.push_back(
      address_message(AF_INET6, 4, "2001:db8::4", RT_SCOPE_UNIVERSE, IFA_F_DEPRECATED));
  messages.push_back(address_message(AF_INET6, 5, "2001:db8::5"));
  messages.push_back(address_message(AF_INET, 6, "169.254.0.9", RT_SCOPE_LINK));
  const auto addresses = read_addresses(std::move(messages));

  const struct {
    const char* name;
    std::vector<DefaultRoute> routes;
    std::string want;
  } cases[] = {
      {"one IPv4 default route: its interface's first global address",
       {{AF_INET, 2, 0}},
       "192.168.1.10@2"},
      {"the lowest metric wins", {{AF_INET, 2, 600}, {AF_INET, 3, 100}}, "10.0.0.7@3"},
      {"equal metrics: the kernel's order", {{AF_INET, 3, 0}, {AF_INET, 2, 0}}, "10.0.0.7@3"},
      {"IPv4 before IPv6, whatever the metrics",
       {{AF_INET6, 5, 0}, {AF_INET, 2, 900}},
       "192.168.1.10@2"},
      {"IPv6 only: its global address, not the link-local one",
       {{AF_INET6, 2, 0}},
       "2001:db8::2@2"},
      {"a route whose interface has no usable address is passed over",
       {{AF_INET6, 4, 1}, {AF_INET6, 5, 2}},
       "2001:db8::5@5"},
      {"an IPv4 route without a global IPv4 address falls back to IPv6",
       {{AF_INET, 6, 0}, {AF_INET6, 2, 0}},
       "2001:db8::2@2"},
      {"loopback's address is not global", {{AF_INET, 1, 0}}, "none"},
      {"no default route", {}, "none"},
  };
  for (const auto& c : cases) EXPECT_EQ(chosen(c.routes, addresses), c.want) << c.name;
}

// Runs `commands` (ip ...) in the namespace child; false if one failed.
bool run_all(test::ChildChecks& c, const std::vector<std::string>& commands) {
  for (const auto& command : commands) {
    if (std::system((command + " >/dev/null 2>&1").c_str()) != 0) {
      c.expect(false, "test setup: " + command);
      return false;
    }
  }
  return true;
}

// The live lookup in a fresh namespace after `setup`: "address@interface" or "none".
std::string live(const std::vector<std::string>& setup, std::string& skip) {
  std::string result_file = ::testing::TempDir() + "/node_address_" + std::to_string(::getpid()) +
                            "_" + std::to_string(std::rand());
  const auto outcome = test::run_in_new_netns([&](test::ChildChecks& c) {
    if (!run_all(c, setup)) return;
    auto found = find_node_address();
    std::string text = !found   ? "error: " + found.error().message
                       : *found ? (*found)->address + "@" + (*found)->interface_name
                                : "none";
    FILE* f = std::fopen(result_file.c_str(), "w");
    if (f) {
      std::fputs(text.c_str(), f);
      std::fclose(f);
    }
  });
  skip = outcome.skip_reason;
  EXPECT_EQ(outcome.failures, "");
  std::string text;
  if (FILE* f = std::fopen(result_file.c_str(), "r")) {
    char buf[256] = {};
    text = std::fgets(buf, sizeof buf, f) ? buf : "";
    std::fclose(f);
    std::remove(result_file.c_str());
  }
  return text;
}

bool has_ip_command() { return std::system("ip -V >/dev/null 2>&1") == 0; }

TEST(FindNodeAddress, TheDefaultRoutesInterfaceAddressIPv4First) {
  if (!has_ip_command()) GTEST_SKIP() << "no ip command (iproute2) to set up the namespace";
  std::string skip;
  const std::string got = live(
      {"ip link add veth0 type veth peer name veth1", "ip link add veth2 type veth peer name veth3",
       "ip link set veth0 up", "ip link set veth1 up", "ip link set veth2 up",
       "ip link set veth3 up", "ip addr add 192.0.2.10/24 dev veth0",
       "ip addr add 198.51.100.7/24 dev veth2", "ip -6 addr add 2001:db8::10/64 dev veth0 nodad",
       "ip route add default via 192.0.2.1 dev veth0 metric 500",
       "ip route add default via 198.51.100.1 dev veth2 metric 100",
       "ip -6 route add default via 2001:db8::1 dev veth0"},
      skip);
  if (!skip.empty()) GTEST_SKIP() << "no network namespace: " << skip;
  EXPECT_EQ(got, "198.51.100.7@veth2");
}

TEST(FindNodeAddress, AnIPv6OnlyNodeGetsItsIPv6Address) {
  if (!has_ip_command()) GTEST_SKIP() << "no ip command (iproute2) to set up the namespace";
  std::string skip;
  const std::string got =
      live({"ip link add veth0 type veth peer name veth1", "ip link set veth0 up",
            "ip link set veth1 up", "ip -6 addr add 2001:db8::10/64 dev veth0 nodad",
            "ip -6 route add default via 2001:db8::1 dev veth0"},
           skip);
  if (!skip.empty()) GTEST_SKIP() << "no network namespace: " << skip;
  EXPECT_EQ(got, "2001:db8::10@veth0");
}

TEST(FindNodeAddress, NoDefaultRouteNoAddress) {
  if (!has_ip_command()) GTEST_SKIP() << "no ip command (iproute2) to set up the namespace";
  std::string skip;
  const std::string got = live({"ip link add veth0 type veth peer name veth1",
                                "ip link set veth0 up", "ip addr add 192.0.2.10/24 dev veth0"},
                               skip);
  if (!skip.empty()) GTEST_SKIP() << "no network namespace: " << skip;
  EXPECT_EQ(got, "none");
}

}  // namespace
}  // namespace yurthub::net
