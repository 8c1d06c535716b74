// HealthChecker: probes every apiserver (`GET /readyz` with the hub's identity, over the last
// probe's connection while the apiserver keeps it open) every --heartbeat-interval-seconds, each
// probe allowed --heartbeat-failed-retry attempts of --heartbeat-timeout-seconds each. One failed
// probe marks a server unhealthy at once;
// --heartbeat-healthy-threshold consecutive successes mark it healthy again; the first probe after
// start decides immediately (YurtHub's state machine, docs/reference/yurthub.md §3.3). Unlike
// YurtHub, the probe is not the node's lease heartbeat: kubelet renews its own lease through the
// hub. Also unlike YurtHub, an unhealthy server that could not be reached (no connection, no
// answer) is probed every second (Settings::recovery_interval), and so is one whose last probe
// succeeded but is not yet healthy again: the node is back online within about
// --heartbeat-healthy-threshold seconds of its link returning, not two intervals (20 s). A server
// that answers, but not 200 (starting, overloaded), keeps the interval: a fleet of hubs must not
// press an apiserver that is coming up.
//
// Runs on one executor (the first worker's). probe_soon() may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "hub/hub_metrics.h"
#include "hub/options.h"
#include "hub/server_set.h"
#include "hub/upstream_pool.h"
#include "net/timer.h"
#include "net/tls.h"

namespace yurthub::hub {

// The per-server state machine, pure so it can be tested without timers.
class HealthState {
 public:
  explicit HealthState(int healthy_threshold) : threshold_(healthy_threshold) {}
  // Records one probe's outcome; returns the new health when it changed (or on the first probe).
  std::optional<bool> record(bool success);
  bool healthy() const { return healthy_; }
  bool known() const { return known_; }

 private:
  int threshold_;
  int successes_ = 0;
  bool healthy_ = false;
  bool known_ = false;
};

class HealthChecker {
 public:
  struct Settings {
    std::chrono::milliseconds interval{10000};
    std::chrono::milliseconds timeout{2000};
    int attempts = 3;
    int healthy_threshold = 2;
    // Between probes of an unhealthy server that was unreachable or has begun to answer 200.
    std::chrono::milliseconds recovery_interval{1000};
  };
  static Settings settings_from(const HubOptions& options);

  // `on_change(server, healthy)` runs on the checker's executor after the ServerSet was updated.
  HealthChecker(boost::asio::any_io_executor executor, ServerSet& servers,
                const net::UpstreamTls& tls, Settings settings, HubMetrics& metrics,
                std::function<void(std::size_t, bool)> on_change);

  void start();
  void stop();
  // Requests an immediate probe of `server` (a proxied request could not reach it). Thread-safe.
  void probe_soon(std::size_t server);
  // True once every server has had its first probe.
  bool initial_probes_done() const { return initial_done_.load() == servers_.size(); }

 private:
  boost::asio::awaitable<void> run_server(std::size_t server);
  // What one probe attempt came to.
  enum class Outcome { Ready, NotReady, Unreachable };
  boost::asio::awaitable<Outcome> probe_once(std::size_t server);
  // How long to wait after a probe with `last` outcome.
  std::chrono::milliseconds next_wait(std::size_t server, Outcome last) const;
  // What one GET /readyz on a connection came to.
  struct Answer {
    std::optional<unsigned> code{};  // none: no answer, and last_failure_ says why
    bool keep = false;               // the connection may carry the next probe
    bool timed_out = false;          // no answer before the deadline
  };
  boost::asio::awaitable<Answer> ask_readyz(UpstreamConnection& conn, std::size_t server,
                                            std::chrono::steady_clock::time_point deadline);

  boost::asio::any_io_executor executor_;
  ServerSet& servers_;
  const net::UpstreamTls& tls_;
  Settings settings_;
  HubMetrics& metrics_;
  std::function<void(std::size_t, bool)> on_change_;
  std::vector<std::unique_ptr<net::Timer>> wake_;  // one per server
  std::vector<HealthState> states_;
  std::vector<std::string> last_failure_;  // why the last probe of each server failed
  // [server]: the last probe's connection, while the apiserver keeps it open. A TLS handshake
  // per probe would be, over a fleet, thousands a second at the apiserver; YurtHub's probes go
  // through Go's keep-alive client.
  std::vector<UpstreamConnectionPtr> kept_;
  std::atomic<std::size_t> initial_done_{0};
  std::atomic<bool> stopped_{false};
};

}  // namespace yurthub::hub
