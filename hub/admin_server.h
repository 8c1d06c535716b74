// AdminServer: the plain-HTTP admin port (--bind-address:--serve-port, 10267): `/v1/healthz`
// (always 200 OK), `/v1/readyz` (200 OK, or 500 with the reason, as YurtHub), and `/metrics`
// (the registry plus process_* metrics in Prometheus text format). Serves one connection per
// call to serve(); the Hub's admin Listener calls it on the first worker.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "base/metrics.h"

namespace yurthub::hub {

class AdminServer {
 public:
  // Returns nullopt when ready, else why not.
  using ReadinessCheck = std::function<std::optional<std::string>()>;

  AdminServer(const base::MetricsRegistry& registry, ReadinessCheck readiness);
  boost::asio::awaitable<void> serve(boost::asio::ip::tcp::socket socket);

 private:
  const base::MetricsRegistry& registry_;
  ReadinessCheck readiness_;
};

// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_open_fds, process_start_time_seconds, read from /proc/self (as Go's process collector).
std::string render_process_metrics();

}  // namespace yurthub::hub
