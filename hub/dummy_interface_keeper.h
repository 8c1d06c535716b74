// DummyInterfaceKeeper: keeps the hub's dummy interface (--dummy-if-name with --dummy-if-ip) in
// place for as long as the hub runs, as YurtHub's network manager does: ensured once before the
// listeners bind (a failure stops the start), checked again every kPeriod on the hub's main
// io_context (re-created, set up or re-addressed when something removed it; a failure is logged
// and retried next period) and deleted when the hub stops. Owned by Hub; every call is on the
// main worker's thread. Each check is a few blocking netlink round trips (microseconds; bounded
// by net::DummyInterfaceSpec::timeout each).
#pragma once

#include <chrono>

#include <boost/asio/any_io_executor.hpp>

#include "base/result.h"
#include "net/dummy_interface.h"
#include "net/timer.h"

namespace yurthub::hub {

class DummyInterfaceKeeper {
 public:
  static constexpr std::chrono::seconds kPeriod{60};  // YurtHub's SyncNetworkPeriod

  DummyInterfaceKeeper(const boost::asio::any_io_executor& executor, net::DummyInterfaceSpec spec,
                       std::chrono::milliseconds period = kPeriod);

  // Ensures the interface now; on success checks it again every period. The error says why the
  // hub cannot start (a missing CAP_NET_ADMIN is named).
  Status start();
  // Stops the periodic check.
  void stop();
  // Deletes the interface (YurtHub does so when it stops); the outcome is logged.
  void remove();

  const net::DummyInterfaceSpec& spec() const { return spec_; }

 private:
  void schedule();
  void check();

  net::DummyInterfaceSpec spec_;
  std::chrono::milliseconds period_;
  net::Timer timer_;
  bool stopped_ = false;
};

}  // namespace yurthub::hub
