// ServerSet: --lb-mode rr and priority over healthy servers, and exclusion of servers that
// already failed a request.
#include "hub/server_set.h"

#include <map>

#include <gtest/gtest.h>

namespace yurthub::hub {
namespace {

std::vector<ServerAddress> three() {
  return {{"https://a:6443", "a", "6443"},
          {"https://b:6443", "b", "6443"},
          {"https://c:6443", "c", "6443"}};
}

TEST(ServerSet, NothingIsPickedBeforeAProbe) {
  ServerSet set(three(), LbMode::RoundRobin);
  EXPECT_FALSE(set.any_healthy());
  EXPECT_FALSE(set.pick().has_value());
}

TEST(ServerSet, RoundRobinSpreadsOverHealthyServersOnly) {
  ServerSet set(three(), LbMode::RoundRobin);
  set.set_healthy(0, true);
  set.set_healthy(2, true);
  std::map<std::size_t, int> picks;
  for (int i = 0; i < 100; ++i) ++picks[*set.pick()];
  EXPECT_EQ(picks.count(1), 0u);
  EXPECT_GE(picks[0], 40);
  EXPECT_GE(picks[2], 40);
}

TEST(ServerSet, PriorityPicksTheFirstHealthyInFlagOrder) {
  ServerSet set(three(), LbMode::Priority);
  set.set_healthy(1, true);
  set.set_healthy(2, true);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(*set.pick(), 1u);
  set.set_healthy(0, true);
  EXPECT_EQ(*set.pick(), 0u);
}

TEST(ServerSet, ExcludedServersAreSkipped) {
  ServerSet set(three(), LbMode::Priority);
  for (std::size_t i = 0; i < 3; ++i) set.set_healthy(i, true);
  EXPECT_EQ(*set.pick(ServerSet::Mask(0b001)), 1u);
  EXPECT_EQ(*set.pick(ServerSet::Mask(0b011)), 2u);
  EXPECT_FALSE(set.pick(ServerSet::Mask(0b111)).has_value());
}

TEST(ServerSet, AuthorityIsTheHostHeaderOfEachServer) {
  ServerSet set({{"https://a:6443", "a", "6443"}, {"https://[fd00::1]:443", "fd00::1", "443"}},
                LbMode::RoundRobin);
  EXPECT_EQ(set.authority(0), "a:6443");
  EXPECT_EQ(set.authority(1), "[fd00::1]:443");
}

TEST(ServerSet, SetHealthyReportsChanges) {
  ServerSet set(three(), LbMode::RoundRobin);
  EXPECT_TRUE(set.set_healthy(0, true));
  EXPECT_FALSE(set.set_healthy(0, true));
  EXPECT_TRUE(set.set_healthy(0, false));
}

}  // namespace
}  // namespace yurthub::hub
