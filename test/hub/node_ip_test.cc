// The --node-ip default (hub/node_ip.h): the address found is taken only when the flag was not
// given, and a failed or empty lookup leaves it empty instead of stopping the hub.
#include "hub/node_ip.h"

#include <gtest/gtest.h>

namespace yurthub::hub {
namespace {

NodeAddressLookup finds(const std::string& address) {
  return [address] {
    return Result<std::optional<net::NodeAddress>>(net::NodeAddress{address, 2, "eth0"});
  };
}

TEST(DefaultNodeIp, TheDefaultRoutesAddressWhenTheFlagIsNotGiven) {
  HubOptions o;
  EXPECT_TRUE(default_node_ip(o, finds("192.168.0.7")));
  EXPECT_EQ(o.node_ip, "192.168.0.7");
}

TEST(DefaultNodeIp, AnExplicitFlagWinsAndNothingIsLookedUp) {
  HubOptions o;
  o.node_ip = "10.1.2.3";
  bool asked = false;
  EXPECT_FALSE(default_node_ip(o, [&asked] {
    asked = true;
    return Result<std::optional<net::NodeAddress>>(net::NodeAddress{"192.168.0.7", 2, "eth0"});
  }));
  EXPECT_EQ(o.node_ip, "10.1.2.3");
  EXPECT_FALSE(asked);
}

TEST(DefaultNodeIp, AFailedOrEmptyLookupLeavesItEmpty) {
  HubOptions o;
  EXPECT_FALSE(default_node_ip(o, [] {
    return Result<std::optional<net::NodeAddress>>(make_error("netlink socket: denied"));
  }));
  EXPECT_EQ(o.node_ip, "");
  EXPECT_FALSE(default_node_ip(o, [] {
    return Result<std::optional<net::NodeAddress>>(std::optional<net::NodeAddress>());
  }));
  EXPECT_EQ(o.node_ip, "");
}

}  // namespace
}  // namespace yurthub::hub
