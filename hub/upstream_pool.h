// Connections to the apiservers: connect_upstream() dials one (TCP + TLS with CA and host-name
// verification), and UpstreamPool keeps idle keep-alive connections per (server, identity) for one
// worker thread. Used by the Forwarder (proxied requests) and the HealthChecker (probes, which
// always dial fresh). Not thread-safe: each worker owns its pool and uses it from its own thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include "base/clock.h"
#include "base/result.h"
#include "hub/hub_metrics.h"
#include "hub/server_set.h"
#include "net/socket_tls.h"
#include "net/tls.h"

namespace yurthub::hub {

// Which TLS identity a connection presents: the hub's client certificate, or none (the request
// carries the caller's own bearer token).
enum class Identity { Hub = 0, Bearer = 1 };

// The largest TLS record's plaintext. Beast reads at most a buffer's free capacity, 512 bytes
// when it is empty: a 16 KiB record then takes 32 reads, each a trip through the event loop (a
// 20 MB list ran at half nginx's speed, a small GET took three reads). Upstream buffers start
// with room for one whole record.
inline constexpr std::size_t kUpstreamReadBytes = 16 * 1024;

struct UpstreamConnection {
  UpstreamConnection(const boost::asio::any_io_executor& executor,
                     std::shared_ptr<boost::asio::ssl::context> tls)
      : context(std::move(tls)), stream(executor, *context) {
    buffer.reserve(kUpstreamReadBytes);
  }
  UpstreamConnection(const UpstreamConnection&) = delete;
  UpstreamConnection& operator=(const UpstreamConnection&) = delete;
  // Closes the connection: one fewer in node_yurthub_closable_conns_collector when it counted.
  ~UpstreamConnection() {
    if (open_gauge) open_gauge->add(-1);
  }

  // Kept for the connection's life: a renewed certificate replaces the hub's context while
  // connections made with the old one are still open.
  std::shared_ptr<boost::asio::ssl::context> context;
  net::SocketTls stream;             // OpenSSL on the socket's descriptor (net/socket_tls.h)
  boost::beast::flat_buffer buffer;  // bytes read past the last response (normally none)
  std::size_t server = 0;
  Identity identity = Identity::Hub;
  bool reused = false;  // came from the idle pool (it may have been closed by the server)
  std::chrono::steady_clock::time_point idle_since;
  // Set by UpstreamPool::dial(), which counted the connection in; null for probes' connections.
  base::Gauge* open_gauge = nullptr;
};
using UpstreamConnectionPtr = std::unique_ptr<UpstreamConnection>;

// An idle connection that may be used again: open, nothing unread, and not closed by the server
// (a poll without waiting).
bool looks_alive(UpstreamConnection& connection);

// What UpstreamPool::reuse() may leave unchecked of an idle connection.
enum class Resend {
  // The request cannot be sent twice (it has a body): every connection is polled for a close.
  Never,
  // The Forwarder sends the request again on a fresh connection if a kept one turns out closed
  // (it has no body): a connection idle for less than kUnpolledIdle is not polled. The poll is a
  // syscall on every request (2-3 µs of a small GET's ~22 added, docs/benchmarks.md); a server
  // closing a connection it used that recently is a restart or a crash, which the resend covers.
  OnClose,
};

// Dials `address` and completes the TLS handshake, all within `timeout`.
boost::asio::awaitable<Result<UpstreamConnectionPtr>> connect_upstream(
    boost::asio::any_io_executor executor, const ServerAddress& address,
    const net::UpstreamTls& tls, Identity identity, std::chrono::milliseconds timeout);

class UpstreamPool {
 public:
  using Connection = UpstreamConnection;
  static constexpr std::size_t kMaxIdlePerKey = 32;
  static constexpr std::chrono::seconds kIdleTimeout{90};
  static constexpr std::chrono::milliseconds kConnectTimeout{10000};
  // Long past what a request rate that makes the poll's cost matter leaves between two uses, and
  // short of any server's idle timeout (which may come with a last "408" on the connection).
  static constexpr std::chrono::seconds kUnpolledIdle{1};

  // Idle connections are timed on base::Clock (a test moves it past kIdleTimeout).
  UpstreamPool(boost::asio::any_io_executor executor, const ServerSet& servers,
               const net::UpstreamTls& tls, HubMetrics& metrics);

  // A usable idle connection to `server` for `identity`, or null: without a coroutine (what most
  // requests need, and a coroutine frame per request costs as much as the lookup). `resend`: see
  // Resend.
  UpstreamConnectionPtr reuse(std::size_t server, Identity identity, Resend resend);
  // A newly dialled connection to `server` for `identity`, counted in
  // node_yurthub_closable_conns_collector until it is destroyed (wherever that happens).
  boost::asio::awaitable<Result<UpstreamConnectionPtr>> dial(std::size_t server, Identity identity);
  // Keeps a connection whose last response was read to the end and may be reused.
  void release(UpstreamConnectionPtr connection);
  // Closes every idle connection to `server` (it turned unhealthy).
  void drop_server(std::size_t server);
  void drop_all();
  // Closes idle connections past kIdleTimeout or closed by the server; the worker calls it
  // periodically so idle sockets do not linger.
  void reap();
  std::size_t idle_count() const;

 private:
  std::deque<UpstreamConnectionPtr>& idle_for(std::size_t server, Identity identity);
  UpstreamConnectionPtr take_usable(std::size_t server, Identity identity, Resend resend);

  boost::asio::any_io_executor executor_;
  const ServerSet& servers_;
  const net::UpstreamTls& tls_;
  HubMetrics& metrics_;
  std::vector<std::deque<UpstreamConnectionPtr>> idle_;  // [server * 2 + identity], newest at back
  std::vector<base::Counter*> reused_;  // [server]: upstream_connections{server, "reused"}
  std::vector<base::Gauge*> open_;      // [server]: closable_conns{"host:port"}
};

}  // namespace yurthub::hub
