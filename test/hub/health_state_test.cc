// HealthState: YurtHub's per-server state machine (docs/reference/yurthub.md §3.3), as sequences of
// probe outcomes and the health changes they must (and must not) cause.
#include "hub/health_checker.h"

#include <gtest/gtest.h>

namespace yurthub::hub {
namespace {

struct Case {
  const char* name;
  int threshold;
  std::vector<bool> probes;
  // One entry per probe: -1 no change reported, 0 became unhealthy, 1 became healthy.
  std::vector<int> changes;
  bool healthy_at_end;
};

const Case kCases[] = {
    {"first success decides at once", 2, {true}, {1}, true},
    {"first failure decides at once", 2, {false}, {0}, false},
    {"one failure flips a healthy server", 2, {true, true, false}, {1, -1, 0}, false},
    {"recovery needs the threshold", 2, {false, true, true}, {0, -1, 1}, true},
    {"a failure resets the success count",
     3,
     {false, true, true, false, true, true, true},
     {0, -1, -1, -1, -1, -1, 1},
     true},
    {"threshold 1 recovers on the first success", 1, {false, true}, {0, 1}, true},
    {"repeated failures report once", 2, {true, false, false, false}, {1, 0, -1, -1}, false},
};

class HealthStateRules : public testing::TestWithParam<Case> {};

TEST_P(HealthStateRules, ReportsChanges) {
  const Case& c = GetParam();
  HealthState state(c.threshold);
  EXPECT_FALSE(state.known());
  for (std::size_t i = 0; i < c.probes.size(); ++i) {
    auto changed = state.record(c.probes[i]);
    if (c.changes[i] < 0) {
      EXPECT_FALSE(changed.has_value()) << "probe " << i;
    } else {
      ASSERT_TRUE(changed.has_value()) << "probe " << i;
      EXPECT_EQ(*changed, c.changes[i] == 1) << "probe " << i;
    }
  }
  EXPECT_TRUE(state.known());
  EXPECT_EQ(state.healthy(), c.healthy_at_end);
}

INSTANTIATE_TEST_SUITE_P(YurtHub, HealthStateRules, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& p) {
                           std::string n = p.param.name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace yurthub::hub
