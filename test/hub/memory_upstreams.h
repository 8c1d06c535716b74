// test_support::MemoryUpstreams: the hub's connections to its apiservers as in-memory pipes
// (test/net/memory_stream.h), in place of the worker's UpstreamPool. The Forwarder and the
// ResponseRelay take their pool as a template argument (hub/forwarder.h); with this one, a test
// runs the whole exchange (server choice, the request going out, the response coming back, the
// connection kept for the next request) with no socket: each dial hands the test the apiserver's
// end of a new pipe, which the test reads and answers. Used by forwarder_streams_test.cc and
// response_relay_streams_test.cc; test-thread only.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include "base/result.h"
#include "hub/upstream_pool.h"
#include "test/net/memory_stream.h"

namespace yurthub::test_support {

// The hub's end of one connection, with what the Forwarder and the relay read of an
// UpstreamConnection.
struct MemoryUpstream {
  explicit MemoryUpstream(MemoryStream s) : stream(std::move(s)) {}
  MemoryStream stream;
  boost::beast::flat_buffer buffer;  // bytes read past the last response
  std::size_t server = 0;
  hub::Identity identity = hub::Identity::Hub;
  bool reused = false;  // came back from the idle list
};

class MemoryUpstreams {
 public:
  using Connection = MemoryUpstream;

  // The apiserver's end of one dialled connection.
  struct Dialled {
    std::size_t server = 0;
    hub::Identity identity = hub::Identity::Hub;
    MemoryStream end;
  };

  explicit MemoryUpstreams(boost::asio::any_io_executor executor)
      : executor_(std::move(executor)) {}

  // An idle connection to `server` for `identity` (the newest), or null. Unlike UpstreamPool, it
  // never checks whether the apiserver closed it: a test may hand back a dead one on purpose.
  std::unique_ptr<MemoryUpstream> reuse(std::size_t server, hub::Identity identity,
                                        hub::Resend /*resend*/) {
    for (auto it = idle.rbegin(); it != idle.rend(); ++it) {
      if ((*it)->server != server || (*it)->identity != identity) continue;
      std::unique_ptr<MemoryUpstream> up = std::move(*it);
      idle.erase(std::next(it).base());
      up->reused = true;
      return up;
    }
    return nullptr;
  }

  // A new connection, whose apiserver end goes to `dialled`; an error for a server in
  // `unreachable`, as a refused connect would be.
  boost::asio::awaitable<Result<std::unique_ptr<MemoryUpstream>>> dial(std::size_t server,
                                                                       hub::Identity identity) {
    if (unreachable.contains(server)) {
      co_return make_error("connect server " + std::to_string(server) + ": connection refused");
    }
    auto [hub_end, server_end] = MemoryStream::pair(executor_);
    dialled.push_back({server, identity, std::move(server_end)});
    auto up = std::make_unique<MemoryUpstream>(std::move(hub_end));
    up->server = server;
    up->identity = identity;
    co_return std::move(up);
  }

  // What the ResponseRelay gives back after a response read to its end: kept for the next
  // request to the same server and identity, as the pool keeps them.
  void release(std::unique_ptr<MemoryUpstream> up) { idle.push_back(std::move(up)); }

  std::deque<Dialled> dialled;
  std::set<std::size_t> unreachable;
  std::vector<std::unique_ptr<MemoryUpstream>> idle;

 private:
  boost::asio::any_io_executor executor_;
};

}  // namespace yurthub::test_support
