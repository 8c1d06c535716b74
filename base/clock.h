// The hub's one clock: every deadline, idle timeout and Asio timer of the hub reads Clock::now()
// (net::Timer and net::TimedSocket wait on it), and every wall-clock reading (log lines,
// certificate validity, cache timestamps) reads WallClock::now(), so a test can stop time and move
// it instead of sleeping. In the hub they are std::chrono::steady_clock and system_clock; a
// TestClock holds both for the test's scope and moves them, and tells ClockListeners (the event
// loops of net::Timer) of each move. Clock::now() and WallClock::now() are safe from any thread.
//
// It is process-wide, not passed in, because Asio's waitable timer reads a static Clock::now();
// docs/architecture.md ("Time") says why that stays.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

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

  // How far the hub's time is from the real steady clock's: zero unless a TestClock moved it.
  static duration shift() noexcept {
    const rep frozen = state().frozen_at.load(std::memory_order_relaxed);
    if (frozen != kRunning) return time_point(duration(frozen)) - std::chrono::steady_clock::now();
    return duration(state().offset.load(std::memory_order_relaxed));
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

// The wall clock as the hub reads it: system_clock, moved by a TestClock as Clock is.
struct WallClock {
  static std::chrono::system_clock::time_point now() noexcept {
    const auto shift = Clock::shift();
    const auto now = std::chrono::system_clock::now();
    if (shift == Clock::duration::zero()) return now;
    return now + std::chrono::duration_cast<std::chrono::system_clock::duration>(shift);
  }
  // Seconds since the Unix epoch, as the cache stamps what it writes.
  static std::int64_t unix_seconds() noexcept {
    return std::chrono::duration_cast<std::chrono::seconds>(now().time_since_epoch()).count();
  }
};

// The wall clock handed to a unit that keeps wall-clock seconds (the token keeper, the callers'
// tokens, the Autonomy condition's keeper): WallClock::unix_seconds in the hub, a test's own
// function in the unit's tests.
using UnixSeconds = std::function<std::int64_t()>;

// Who is told when a TestClock moves the time, on the thread that moves it: an event loop whose
// timers would otherwise sleep past an expiry that a move brought forward (net/timer.cc). A
// listener is a pointer and a function; remove() returns once its function is not running, and
// it is never called after.
class ClockListeners {
 public:
  using Callback = void (*)(void* listener);

  static void add(void* listener, Callback callback) {
    std::lock_guard lock(registry().mutex);
    registry().listeners.emplace_back(listener, callback);
  }
  static void remove(void* listener) {
    std::lock_guard lock(registry().mutex);
    std::erase_if(registry().listeners, [&](const auto& l) { return l.first == listener; });
  }
  static void notify() {
    std::lock_guard lock(registry().mutex);
    for (const auto& [listener, callback] : registry().listeners) callback(listener);
  }

 private:
  struct Registry {
    std::mutex mutex;
    std::vector<std::pair<void*, Callback>> listeners;
  };
  static Registry& registry() {
    static Registry value;
    return value;
  }
};

// Tests only: holds the hub's Clock (and WallClock with it) where it is until destroyed; advance()
// moves it forward. Then the clock runs again from where it was left, so it never goes back. One
// at a time per process; the hub's threads see the moves at once, and their timers that a move
// made due fire without waiting (ClockListeners).
class TestClock {
 public:
  TestClock() { Clock::state().frozen_at.store(Clock::now().time_since_epoch().count()); }
  ~TestClock() {
    auto& state = Clock::state();
    state.offset.store(state.frozen_at.load() -
                       std::chrono::steady_clock::now().time_since_epoch().count());
    state.frozen_at.store(Clock::kRunning);
    ClockListeners::notify();
  }
  TestClock(const TestClock&) = delete;
  TestClock& operator=(const TestClock&) = delete;

  void advance(Clock::duration by) {
    Clock::state().frozen_at.fetch_add(by.count());
    ClockListeners::notify();
  }
};

}  // namespace yurthub::base
