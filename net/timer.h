// net::Timer: the Asio timer every part of the hub waits on, on base::Clock instead of
// steady_clock, so a test that freezes the clock (base::TestClock) and advances it fires the
// hub's timers without sleeping. Used wherever the hub sleeps, backs off or bounds a wait.
#pragma once

#include <algorithm>
#include <chrono>

#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/wait_traits.hpp>

#include "base/clock.h"

namespace yurthub::net {

// While the clock is frozen, time moves only when a test advances it, which the event loop
// cannot see coming: timers then poll every millisecond instead of sleeping until their expiry.
struct ClockWaitTraits {
  static base::Clock::duration to_wait_duration(const base::Clock::duration& d) {
    if (!base::Clock::frozen()) return d;
    return std::min<base::Clock::duration>(d, std::chrono::milliseconds(1));
  }
  static base::Clock::duration to_wait_duration(const base::Clock::time_point& t) {
    const auto now = base::Clock::now();
    if (t <= now) return base::Clock::duration::zero();
    return to_wait_duration(t - now);
  }
};

using Timer = boost::asio::basic_waitable_timer<base::Clock, ClockWaitTraits>;

}  // namespace yurthub::net
