// fake_apiserver: a fake kube-apiserver (v1.26 wire format) for the integration tests and the
// README demo. Flags → Options → Server on a single-threaded io_context; prints
// `fake-apiserver listening on HOST:PORT` once listening; SIGTERM/SIGINT exit 0.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "base/log.h"
#include "test/fake_apiserver/options.h"
#include "test/fake_apiserver/server.h"

int main(int argc, char** argv) {
  using namespace yurthub;
  auto options = fake::parse_options(argc, argv);
  if (!options) {
    std::cerr << "fake_apiserver: " << options.error().message << "\n" << fake::usage();
    return 2;
  }
  if (options->help) {
    std::cout << fake::usage();
    return 0;
  }
  if (options->verbose) log::set_min_level(log::Level::Debug);
  std::signal(SIGPIPE, SIG_IGN);

  boost::asio::io_context ioc(1);
  fake::Server server(ioc, *options);
  Status started = server.start();
  if (!started.ok()) {
    YH_LOG(Error) << started.error().message;
    return 1;
  }
  std::cout << "fake-apiserver listening on " << options->bind << ":" << server.port() << std::endl;

  boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    YH_LOG(Info) << "signal " << sig << ": shutting down";
    server.shutdown();
  });
  ioc.run();
  if (server.connection_count() > 0) {
    // Stopped with coroutines still suspended: destroying them would touch the Server.
    std::fflush(nullptr);
    _exit(0);
  }
  YH_LOG(Info) << "stopped";
  return 0;
}
