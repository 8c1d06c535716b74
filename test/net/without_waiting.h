// finishes_without_waiting(work, stream): runs `work`, synchronous socket calls that must never
// wait, on a thread of its own. If it has not finished within 30 s, the stream's socket is shut
// down and closed, which wakes a blocked call, and the answer is false: a test of a call that
// should say would_block then fails instead of hanging. Header-only; used by
// test/net/timed_socket_test.cc and test/hub/upstream_pool_test.cc.
#pragma once

#include <chrono>
#include <future>
#include <utility>

#include "net/streams.h"

namespace yurthub::net::test_support {

template <class Work, class Stream>
bool finishes_without_waiting(Work work, Stream& stream) {
  auto done = std::async(std::launch::async, std::move(work));
  if (done.wait_for(std::chrono::seconds(30)) == std::future_status::ready) return true;
  close_socket(stream);  // its shutdown wakes the blocked call
  done.wait();
  return false;
}

}  // namespace yurthub::net::test_support
