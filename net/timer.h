// net::Timer: the Asio timer every part of the hub waits on, on base::Clock instead of
// steady_clock, so a test that holds the clock (base::TestClock) and advances it fires the hub's
// timers without sleeping. Used wherever the hub sleeps, backs off or bounds a wait.
#pragma once

#include <chrono>
#include <type_traits>
#include <utility>

#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/wait_traits.hpp>

#include "base/clock.h"

namespace yurthub::net {

// An event loop sleeps until its earliest timer's expiry as base::Clock measures it. While a
// TestClock holds the clock, that sleep is as long as the held time has left to go, which no
// real time shortens: the loop sleeps on until the test moves the clock, and the move wakes it
// (ClockWaker, net/timer.cc) to fire what became due. No timer polls.
struct ClockWaitTraits {
  static base::Clock::duration to_wait_duration(const base::Clock::duration& d) { return d; }
  static base::Clock::duration to_wait_duration(const base::Clock::time_point& t) {
    const auto now = base::Clock::now();
    if (t <= now) return base::Clock::duration::zero();
    return t - now;
  }
};

using BasicTimer = boost::asio::basic_waitable_timer<base::Clock, ClockWaitTraits>;

// Makes the event loop of `executor` one that a move of a held clock wakes (once per loop).
void wake_on_clock_moves(const BasicTimer::executor_type& executor);

// A BasicTimer whose event loop a TestClock's moves wake. Constructed as a BasicTimer is.
class Timer : public BasicTimer {
 public:
  template <class Where, class... Rest>
  requires(!std::is_same_v<std::remove_cvref_t<Where>, Timer>) explicit Timer(Where&& where,
                                                                              Rest&&... rest)
      : BasicTimer(std::forward<Where>(where), std::forward<Rest>(rest)...) {
    wake_on_clock_moves(get_executor());
  }
};

}  // namespace yurthub::net
