// AutonomyKeeper: keeps the Autonomy condition on the hub's own Node (autonomy_condition.h), as
// upstream YurtHub's autonomy proxy does (docs/reference/yurthub.md, "Autonomy condition").
// Edge mode only; created by cmd/yurthub.cc after the Hub started, with or without a cache.
//
// When: upstream decides on every GET kubelet makes of its node (about every 10 s). Here one
// coroutine on the hub's first worker checks every `interval` (10 s), and at once when the
// cache's health changes state or the hub gets an apiserver back (both polled every second, in
// memory). A check GETs the node from the
// cloud and, only when the condition must change, PATCHes nodes/<node>/status with a strategic
// merge patch of that one condition: kubelet's conditions are untouched.
// How: straight to a healthy apiserver with the hub's own identity (system:node:<node>), through
// `call_cloud`, never through the proxy port: the request is never answered by the cache nor
// journaled. With no healthy apiserver nothing is read or written (the condition stays as the
// cloud has it; kubelet's own journaled status patches cover the node meanwhile).
// Threading: start() and stop() from any thread; everything else on `executor`.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/result.h"
#include "cache/autonomy_condition.h"
#include "net/timer.h"

namespace yurthub::cache {

struct CloudRequest {
  std::string method;  // "GET", "PATCH"
  std::string target;
  std::string content_type;  // of `body`, when not empty
  std::string body;
};

struct CloudAnswer {
  unsigned status = 0;
  std::string body;
};

// Sends one request straight to a healthy apiserver with the hub's identity. An error when no
// apiserver is healthy (then nothing is sent) or no answer came; any HTTP status is an answer.
using CloudCall = std::function<boost::asio::awaitable<Result<CloudAnswer>>(CloudRequest)>;

class AutonomyKeeper {
 public:
  struct Settings {
    std::string node_name;
    boost::asio::any_io_executor executor;
    CloudCall call_cloud;
    std::function<CacheHealth()> cache_health;
    std::function<bool()> online;  // any apiserver healthy: a check at once when it turns true
    base::UnixSeconds unix_now;
    std::chrono::milliseconds interval{10000};
    std::chrono::milliseconds health_poll{1000};
  };

  AutonomyKeeper(Settings settings, base::MetricsRegistry& registry);

  // Starts the loop (its first check at once). Once. stop() ends it at its next step; the
  // keeper must outlive the executor's io_context (the loop's frame may be destroyed with it).
  void start();
  void stop();

  // One check: reads the node, decides, writes if needed. For the loop and for tests.
  boost::asio::awaitable<void> check();

 private:
  boost::asio::awaitable<void> run();
  // True when the apiserver took the patch.
  boost::asio::awaitable<bool> write(const NodeCondition& condition);

  Settings settings_;
  base::CounterFamily& checks_;  // node_yurthub_autonomy_checks_total{outcome}
  int cache_failures_ = 0;       // consecutive failing checks (loop only)
  std::string last_skip_;        // the last reason a check did nothing, logged once (loop only)
  net::Timer* timer_ = nullptr;  // the loop's own, while it runs (executor only)
  std::atomic<bool> running_{false}, stopping_{false};
};

}  // namespace yurthub::cache
