// base::Clock and base::WallClock under a base::TestClock: held where they are, moved together by
// advance(), running again from where they were left once it is gone.
#include "base/clock.h"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace yurthub::base {
namespace {

using namespace std::chrono_literals;

TEST(Clock, ATestClockHoldsBothClocksAndMovesThemTogether) {
  TestClock clock;
  const auto steady = Clock::now();
  const auto wall = WallClock::now();
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(Clock::now(), steady);
  // The wall clock is read as system_clock plus the held time's distance from steady_clock,
  // two readings apart: equal to within a few microseconds, not to the nanosecond.
  EXPECT_LT(std::chrono::abs(WallClock::now() - wall), 1ms);

  clock.advance(1h);
  EXPECT_EQ(Clock::now() - steady, 1h);
  EXPECT_LT(std::chrono::abs(WallClock::now() - wall - 1h), 1ms);
}

TEST(Clock, OnceTheTestClockIsGoneBothRunOnFromWhereTheyWereLeft) {
  Clock::time_point steady;
  std::chrono::system_clock::time_point wall;
  {
    TestClock clock;
    clock.advance(24h);
    steady = Clock::now();
    wall = WallClock::now();
  }
  EXPECT_GE(Clock::now(), steady);
  EXPECT_GE(WallClock::now(), wall - 1ms);
  EXPECT_GT(WallClock::now(), std::chrono::system_clock::now() + 23h);
}

}  // namespace
}  // namespace yurthub::base
