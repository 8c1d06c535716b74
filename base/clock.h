// The hub's one clock: every deadline, idle timeout and Asio timer of the hub reads Clock::now()
// (net::Timer and net::TimedSocket wait on it), so a test can stop time and move it instead of
// sleeping. In the hub it is std::chrono::steady_clock; a TestClock holds it for the test's
// scope and moves it. Header-only, no Asio; Clock::now() is safe from any thread.
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
    const rep frozen = state().frozen_at.load(std::memory_order_relaxed);
    if (frozen != kRunning) return time_point(duration(frozen));
    return std::chrono::steady_clock::now() +
           duration(state().offset.load(std::memory_order_relaxed));
  }

  // True while a TestClock holds the time (net::Timer then polls, see net/timer.h).
  static bool frozen() noexcept {
    return state().frozen_at.load(std::memory_order_relaxed) != kRunning;
  }

 private:
  friend class TestClock;
  static constexpr rep kRunning = 0;
  struct State {
    std::atomic<rep> frozen_at{kRunning};  // the time held by a TestClock, or kRunning
    std::atomic<rep> offset{0};            // how far a TestClock moved it, once it runs again
  };
  static State& state() noexcept {
    static State value;
    return value;
  }
};

// Tests only: holds the hub's Clock where it is until destroyed; advance() moves it forward.
// Then the clock runs again from where it was left, so it never goes back. One at a time per
// process; the hub's threads see the moves at once.
class TestClock {
 public:
  TestClock() { Clock::state().frozen_at.store(Clock::now().time_since_epoch().count()); }
  ~TestClock() {
    auto& state = Clock::state();
    state.offset.store(state.frozen_at.load() -
                       std::chrono::steady_clock::now().time_since_epoch().count());
    state.frozen_at.store(Clock::kRunning);
  }
  TestClock(const TestClock&) = delete;
  TestClock& operator=(const TestClock&) = delete;

  void advance(Clock::duration by) { Clock::state().frozen_at.fetch_add(by.count()); }
};

}  // namespace yurthub::base
