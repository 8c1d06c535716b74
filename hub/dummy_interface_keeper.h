// DummyInterfaceKeeper: keeps the hub's dummy interface (--dummy-if-name with --dummy-if-ip) in
// place for as long as the hub runs, as YurtHub's network manager does: ensured once before the
// listeners bind, checked again every kPeriod on the hub's main io_context (re-created, set up or
// re-addressed when something removed it) and deleted when the hub stops.
//
// Unlike YurtHub, an interface that cannot be made (a kernel without the dummy link kind, no
// CAP_NET_ADMIN, a link of that name of another kind) never stops the hub: kubelet and the other
// host clients only need 127.0.0.1, and a hub that exits takes the node down with it. The keeper
// then tries again after kFirstRetry, doubling up to kPeriod, and calls on_first_ready() once it
// succeeds (the Hub binds the dummy-IP listeners then). The state is logged once per change (a
// warning when it goes missing, info when it is back), exported as
// node_yurthub_dummy_interface_ready (1/0) and node_yurthub_dummy_interface_failures_total, and
// told by problem() for /v1/readyz's body.
//
// Owned by Hub; every call is on the main worker's thread. Each check is a few blocking netlink
// round trips (microseconds; bounded by net::DummyInterfaceSpec::timeout each).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include "base/metrics.h"
#include "base/result.h"
#include "net/dummy_interface.h"
#include "net/timer.h"

namespace yurthub::hub {

class DummyInterfaceKeeper {
 public:
  static constexpr std::chrono::seconds kPeriod{60};  // YurtHub's SyncNetworkPeriod
  static constexpr std::chrono::seconds kFirstRetry{1};

  // Registers the two metric families in `registry` (once per registry).
  DummyInterfaceKeeper(const boost::asio::any_io_executor& executor, net::DummyInterfaceSpec spec,
                       base::MetricsRegistry& registry, std::chrono::milliseconds period = kPeriod,
                       std::chrono::milliseconds first_retry = kFirstRetry);

  // Called once, on the executor, when the interface is first in place after start() found it
  // missing. REQUIRES: before start().
  void on_first_ready(std::function<void()> callback) { on_first_ready_ = std::move(callback); }

  // Ensures the interface now and keeps checking it. Returns whether it is in place; when not,
  // problem() says why and the keeper keeps trying.
  bool start();
  // Stops the periodic check.
  void stop();
  // Deletes the interface (YurtHub does so when it stops); the outcome is logged.
  void remove();

  bool ready() const { return ready_; }
  // Why the interface is missing ("" while it is in place), for /v1/readyz.
  const std::string& problem() const { return problem_; }
  const net::DummyInterfaceSpec& spec() const { return spec_; }

 private:
  // One attempt; updates the state, the metrics and the log. Returns whether it is in place.
  bool check();
  void schedule(std::chrono::milliseconds after);

  net::DummyInterfaceSpec spec_;
  std::chrono::milliseconds period_;
  std::chrono::milliseconds first_retry_;
  std::chrono::milliseconds retry_;  // the next wait after a failure
  net::Timer timer_;
  base::Gauge& ready_gauge_;
  base::Counter& failures_;
  std::function<void()> on_first_ready_;
  bool ever_ready_ = false;
  bool checked_ = false;  // a state was logged
  bool ready_ = false;
  bool stopped_ = false;
  std::string problem_;
};

}  // namespace yurthub::hub
