// Worker: one proxy I/O thread. It owns an io_context, the upstream connection pool used by the
// sessions it runs, the request metrics' series they count into (RequestSeries), and a registry
// of those sessions so it can end their streams when an apiserver turns unhealthy or the hub
// drains. Everything a worker owns is touched only from its own thread; other threads reach it
// with post(). SharedState is what all workers share (thread-safe by construction: atomics,
// immutable data, thread-safe metrics).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <unordered_set>

#include <boost/asio/io_context.hpp>
#include "net/timer.h"

#include "hub/connection_limits.h"
#include "hub/health_checker.h"
#include "hub/hooks/cache_hooks.h"
#include "hub/hooks/filter_hooks.h"
#include "hub/hooks/shared_cache_hooks.h"
#include "hub/hub_metrics.h"
#include "hub/options.h"
#include "hub/request_series.h"
#include "hub/server_set.h"
#include "hub/upstream_pool.h"
#include "net/tls.h"

namespace yurthub::hub {

// What a worker can ask of each of its sessions.
class SessionControl {
 public:
  virtual ~SessionControl() = default;
  // The apiserver `server` turned unhealthy (end any stream relayed from it) or healthy (end any
  // offline watch, so its client re-watches upstream).
  virtual void on_server_health(std::size_t server, bool healthy) = 0;
  // The hub is draining: close if idle, end streams, finish the request in progress.
  virtual void on_drain() = 0;
  // What the response filters read changed: correct a filtered watch being relayed.
  virtual void on_filters_changed() = 0;
};

struct SharedState {
  const HubOptions& options;
  ServerSet& servers;
  const net::UpstreamTls& tls;
  HubMetrics& metrics;
  HealthChecker* health = nullptr;   // null in cloud mode (every server is taken as healthy)
  CacheHooks* cache = nullptr;       // null in cloud mode: nothing is cached or served offline
  FilterHooks* filters = nullptr;    // null when no response is filtered
  SharedCacheHooks* pool = nullptr;  // null when pool-scope resources are not shared
  std::atomic<bool> draining{false};
  std::atomic<int> in_flight{0};  // short-running requests being served (--max-requests-in-flight)
  std::atomic<int> long_running{0};  // watches and tunnels (--max-long-running-requests)
  std::unique_ptr<ConnectionLimits> connections = nullptr;  // the proxy listeners' clients
  // 128 random bits made at start, in hex: the kReplayHeader value of the journal's replay.
  std::string replay_token = {};
  // How long a filtered request waits for the filters' first sync before it gets 429.
  std::chrono::milliseconds filters_ready_wait = std::chrono::seconds(10);
};

class Worker {
 public:
  explicit Worker(SharedState& shared);
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  boost::asio::io_context& io() { return io_; }
  UpstreamPool& pool() { return pool_; }
  RequestSeries& request_series() { return request_series_; }
  SharedState& shared() { return shared_; }

  std::size_t session_count() const { return session_count_.load(); }

  // Thread-safe: run on the worker's thread.
  void post_server_health(std::size_t server, bool healthy);
  void post_drain();
  void post_filters_changed();

  // Runs the io_context on a new thread (or, with run_here, on the calling thread until stopped).
  void start_thread();
  void run_here();
  void stop() { io_.stop(); }
  void join();

 private:
  void schedule_reap();

  SharedState& shared_;
  // Declared before io_ so it outlives it: destroying io_ destroys the sessions' coroutine
  // frames, which unregister themselves.
  std::unordered_set<SessionControl*> sessions_;
  std::atomic<std::size_t> session_count_{0};  // mirrors sessions_.size() for other threads
  boost::asio::io_context io_{1};
  UpstreamPool pool_;
  RequestSeries request_series_;
  net::Timer reap_timer_;
  std::thread thread_;

  friend class SessionRegistration;
};

// RAII registration of a session with its worker (constructed and destroyed on the worker thread).
class SessionRegistration {
 public:
  SessionRegistration(Worker& worker, SessionControl* session);
  ~SessionRegistration();
  SessionRegistration(const SessionRegistration&) = delete;
  SessionRegistration& operator=(const SessionRegistration&) = delete;

 private:
  Worker& worker_;
  SessionControl* session_;
};

}  // namespace yurthub::hub
