// test_support::MemoryWorker: a real hub Worker, with its SharedState, for the request path's
// tests over in-memory streams (test/net/memory_stream.h): response_relay_streams_test.cc and
// proxy_session_streams_test.cc, forwarder_streams_test.cc. Its io_context runs on the test's
// thread only, in settle(); one apiserver is configured (healthy or not), or several in priority
// order (kServerUrl first, then kSecondServerUrl), and nothing is cached or filtered.
#pragma once

#include <memory>
#include <utility>

#include <boost/asio/io_context.hpp>

#include "base/metrics.h"
#include "hub/hub_metrics.h"
#include "hub/options.h"
#include "hub/server_set.h"
#include "hub/worker.h"
#include "net/tls.h"
#include "test/net/memory_stream.h"

namespace yurthub::test_support {

class MemoryWorker {
 public:
  static constexpr const char* kServerUrl = "https://apiserver.test:6443";
  static constexpr const char* kSecondServerUrl = "https://apiserver-2.test:6443";

  explicit MemoryWorker(bool server_healthy = true) {
    options.servers = {{kServerUrl, "apiserver.test", "6443"}};
    servers = std::make_unique<hub::ServerSet>(options.servers, hub::LbMode::RoundRobin);
    servers->set_healthy(0, server_healthy);
    start();
  }
  // Two healthy apiservers, tried in priority order.
  struct TwoServers {};
  explicit MemoryWorker(TwoServers) {
    options.servers = {{kServerUrl, "apiserver.test", "6443"},
                       {kSecondServerUrl, "apiserver-2.test", "6443"}};
    servers = std::make_unique<hub::ServerSet>(options.servers, hub::LbMode::Priority);
    servers->set_healthy(0, true);
    servers->set_healthy(1, true);
    start();
  }

  boost::asio::io_context& io() { return worker->io(); }
  // Two connected in-memory ends on the worker's executor.
  std::pair<MemoryStream, MemoryStream> pipe() { return MemoryStream::pair(io().get_executor()); }

  // Runs everything that is ready on the worker's io_context, until nothing is. Never waits.
  void settle() {
    io().restart();
    while (io().poll() > 0) {
    }
  }

  hub::HubOptions options;
  base::MetricsRegistry registry;
  hub::HubMetrics metrics{registry};
  net::UpstreamTls tls;
  std::unique_ptr<hub::ServerSet> servers;
  std::unique_ptr<hub::SharedState> shared;
  std::unique_ptr<hub::Worker> worker;

 private:
  void start() {
    shared.reset(new hub::SharedState{options, *servers, tls, metrics});
    worker = std::make_unique<hub::Worker>(*shared);
  }
};

}  // namespace yurthub::test_support
