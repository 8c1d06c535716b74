// The steady clock as a value that a unit is given, so a test can move time instead of sleeping:
// UpstreamPool (idle timeout), LocalProxy (the snapshot hold) take a SteadyClock; tests pass a
// ManualClock's now(). Header-only; ManualClock is not thread-safe (one test thread moves it).
#pragma once

#include <chrono>
#include <functional>

namespace yurthub::base {

using SteadyClock = std::function<std::chrono::steady_clock::time_point()>;

inline SteadyClock real_steady_clock() {
  return [] { return std::chrono::steady_clock::now(); };
}

// A clock that moves only when told.
class ManualClock {
 public:
  std::chrono::steady_clock::time_point now() const { return now_; }
  void advance(std::chrono::steady_clock::duration by) { now_ += by; }
  // A SteadyClock reading this one; it must not outlive it.
  SteadyClock clock() const {
    return [this] { return now_; };
  }

 private:
  std::chrono::steady_clock::time_point now_ = std::chrono::steady_clock::now();
};

}  // namespace yurthub::base
