// Test support: waiting, bounded, for what another thread or an event loop makes true. The one
// poll helper of the tests (each wait has a limit; a test asserts on the result). Header-only.
#pragma once

#include <chrono>
#include <thread>

#include <boost/asio/io_context.hpp>

namespace yurthub::test_support {

// Checks `done` every `period` until it holds (true) or `limit` passes (false), sleeping between
// checks: for what another thread or process makes true.
template <class Done>
bool eventually(Done done, std::chrono::milliseconds limit,
                std::chrono::milliseconds period = std::chrono::milliseconds(1)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(period);
  }
  return true;
}

// Runs `io` until `done` holds (true) or `limit` passes (false): for what a test's own event loop
// makes true. The loop runs 10 ms at a time between checks.
template <class Done>
bool run_until(boost::asio::io_context& io, Done done,
               std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    if (io.stopped()) io.restart();
    io.run_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace yurthub::test_support
