// The hub's one clock: every deadline, idle timeout and Asio timer of the hub reads Clock::now()
// (net::Timer and net::TimedSocket wait on it), so a test can stop time and move it instead of
// sleeping. In the hub it is std::chrono::steady_clock; a TestClock freezes it for the test's
// scope. Header-only, no Asio; Clock::now() is safe from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace yurthub::base {

// Meets the std::chrono Clock requirements; its time_point is steady_clock's (same epoch), so
// deadlines pass between the two without conversion.
struct Clock {
  using duration = std::chrono::steady_clock::duration;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::steady_clock::time_point;
  static constexpr bool is_steady = true;

  static time_point now() noexcept {
    const auto frozen = frozen_at().load(std::memory_order_relaxed);
    if (frozen == kRunning) return std::chrono::steady_clock::now();
    return time_point(duration(frozen));
  }

  // True while a TestClock holds the time (net::Timer then polls, see net/timer.h).
  static bool frozen() noexcept { return frozen_at().load(std::memory_order_relaxed) != kRunning; }

 private:
  friend class TestClock;
  static constexpr rep kRunning = 0;
  static std::atomic<rep>& frozen_at() noexcept {
    static std::atomic<rep> value{kRunning};
    return value;
  }
};

// Tests only: stops the hub's Clock at the real time of construction until destroyed; advance()
// moves it forward. One at a time per process; the hub's threads see the moves at once.
class TestClock {
 public:
  TestClock() {
    Clock::frozen_at().store(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  ~TestClock() { Clock::frozen_at().store(Clock::kRunning); }
  TestClock(const TestClock&) = delete;
  TestClock& operator=(const TestClock&) = delete;

  Clock::time_point now() const { return Clock::now(); }
  void advance(Clock::duration by) { Clock::frozen_at().fetch_add(by.count()); }
};

}  // namespace yurthub::base
