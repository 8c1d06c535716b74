// TapQueue: the thread on which the cache digests the list responses the hub relays, so that a
// client's bytes never wait for the cache. A list's tap frames every item, reads its metadata
// and copies it for the CacheWriter: for kubelet's 19 MiB pod list that was two thirds of the
// worker's time, and the client got its last byte only after it (docs/benchmarks.md). Now the
// worker copies the body once into bounded pieces and goes on relaying; the pieces are digested
// here, in the order they were posted, once the list has ended (a hold: see begin_hold).
//
// Order is what keeps the cache right: a watch's events must reach the CacheWriter after the list
// they follow, or an older list would overwrite them. So a watch tap (deferred_watch_tap) feeds
// its core on the worker thread only while the queue is idle (everything posted before has been
// digested and submitted), and queues its events behind the lists otherwise.
//
// Created by NodeCache (one per hub) and used by the taps it makes on worker threads; the jobs
// run on the queue's own thread. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include <boost/asio/awaitable.hpp>

#include "base/metrics.h"
#include "hub/hooks/cache_hooks.h"

namespace yurthub::cache {

class TapQueue {
 public:
  using Job = std::function<void()>;

  // `max_bytes`: the body bytes that may wait to be digested, across every tap; `queued`, if
  // given, shows how many do (node_yurthub_cache_tap_queue_bytes).
  explicit TapQueue(std::size_t max_bytes = 64u << 20, base::Gauge* queued = nullptr,
                    std::chrono::milliseconds hold_limit = std::chrono::seconds(1));
  ~TapQueue();  // digests what is queued (it submits to the CacheWriter), then stops the thread
  TapQueue(const TapQueue&) = delete;
  TapQueue& operator=(const TapQueue&) = delete;

  // A list's pieces wait, queued, until the list has ended, so that this thread and the
  // CacheWriter do not take CPU from the relay while the client still waits for the list's bytes
  // (on two cores shared with the apiserver that showed in the client's time; see
  // docs/benchmarks.md). A hold lasts until end_hold(), until the queue passes half its bound
  // (then every hold ends: a list that large, or that many at once, is digested as it comes, so
  // the queue keeps room and none falls behind), or `hold_limit` at most (a list that slow waits
  // for its link, not for CPU). Jobs behind a hold wait too: order is kept. Held jobs count as
  // outstanding work, so a watch that follows its list still queues behind it (idle()).
  using HoldId = std::uint64_t;
  HoldId begin_hold();
  void end_hold(HoldId hold);

  // Queues `job`, which holds `bytes` of copied body, after every job queued before it; under
  // `hold` (0: none), it waits until that hold ends. False, queueing nothing, when that would
  // pass the bound.
  bool post(Job job, std::size_t bytes, HoldId hold = 0);
  // Queues a small job (a response's end, a failure) regardless of the bound, so a tap's core
  // always learns how its response ended.
  void post_control(Job job);
  // Nothing is queued or running: every job posted before the call has finished (what it
  // submitted to the CacheWriter was submitted before what the caller submits next).
  bool idle() const { return outstanding_.load(std::memory_order_acquire) == 0; }
  // Waits until idle(), at most `limit`. True when idle.
  bool drain(std::chrono::milliseconds limit);
  // A coroutine's wait, at most `limit`, for every job posted before the call to finish (jobs
  // posted after it are not waited for). True when they did. The queue may outlive the
  // coroutine's io_context: its marker job touches the executor only while the coroutine waits.
  boost::asio::awaitable<bool> caught_up(std::chrono::milliseconds limit);

 private:
  struct Queued {
    Job job;
    std::size_t bytes;
    HoldId hold;
  };
  void run();
  // Whether the job at the front must wait, and till when. REQUIRES: mutex_ held, jobs_ not empty.
  std::optional<std::chrono::steady_clock::time_point> front_held();
  void show_queued();  // REQUIRES: mutex_ held

  const std::size_t max_bytes_;
  const std::chrono::milliseconds hold_limit_;
  base::Gauge* const queued_gauge_;
  std::atomic<std::size_t> outstanding_{0};  // jobs queued or running
  mutable std::mutex mutex_;                 // guards the members below
  std::condition_variable wake_;             // a job was queued, or stopping
  std::condition_variable drained_;          // outstanding_ reached 0
  std::deque<Queued> jobs_;
  // The holds that have not ended, and when each ends regardless: on the real steady clock, which
  // the condition variable waits on (not base::Clock; docs/architecture.md, "Time").
  std::unordered_map<HoldId, std::chrono::steady_clock::time_point> holds_;
  HoldId last_hold_ = 0;
  std::size_t queued_bytes_ = 0;
  bool stopping_ = false;
  std::thread thread_;  // last: started after everything above exists
};

// What a deferred tap drives: one of the cache's synchronous taps (response_taps.cc), plus what
// the deferral needs of it. Each core is used by one thread at a time: the worker while the queue
// is idle, the queue's thread otherwise.
class TapCore : public hub::ResponseTap {
 public:
  // The queue was full: nothing more of this response reaches the core; it is not cached, and
  // its list is marked stale.
  virtual void fell_behind() = 0;
  // A watch whose queue was busy when it began: its list may have failed while being digested.
  // Then the watch fails too (the client re-lists), as it would have had the list failed first.
  virtual void recheck_stale() {}
  // The piece of the body that the next calls' bytes lie in, or null after them: a list's core
  // may keep its items as views into it rather than copies (CacheOp::piece).
  virtual void share_piece(const std::shared_ptr<const std::string>& /*piece*/) {}
};

// A list's tap whose body is digested on `queue`'s thread in pieces of up to 256 KiB: its bytes,
// or, when the core has a list_sink() and the response filter frames the list, the members and
// items as the filter framed them. failed() reads the core's flag (an atomic set from any thread).
std::unique_ptr<hub::ResponseTap> deferred_list_tap(std::shared_ptr<TapCore> core, TapQueue& queue);
// A watch's tap: its events reach the core on the worker thread while `queue` is idle, else
// through the queue, behind the lists posted before them.
std::unique_ptr<hub::ResponseTap> deferred_watch_tap(std::shared_ptr<TapCore> core,
                                                     TapQueue& queue);

}  // namespace yurthub::cache
