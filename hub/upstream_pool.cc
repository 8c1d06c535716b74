// Dialling apiservers and pooling keep-alive connections; see upstream_pool.h.
#include "hub/upstream_pool.h"

#include <poll.h>

#include <openssl/x509v3.h>
#include <boost/asio/ip/tcp.hpp>

#include "base/clock.h"
#include "net/http_io.h"

namespace yurthub::hub {
namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::ip::tcp;

namespace {
// Open, with no bytes read past the last response (in the buffer or held by OpenSSL).
bool holds_nothing_unread(UpstreamConnection& c) {
  return c.buffer.size() == 0 && !c.stream.holds_unread() &&
         beast::get_lowest_layer(c.stream).socket().is_open();
}
}  // namespace

// An idle keep-alive connection that the server has closed (or that has unexpected bytes
// waiting) is readable; a healthy idle one is not.
bool looks_alive(UpstreamConnection& c) {
  if (!holds_nothing_unread(c)) return false;
  pollfd pfd{beast::get_lowest_layer(c.stream).socket().native_handle(), POLLIN, 0};
  return ::poll(&pfd, 1, 0) == 0;
}

asio::awaitable<Result<UpstreamConnectionPtr>> connect_upstream(asio::any_io_executor executor,
                                                                const ServerAddress& address,
                                                                const net::UpstreamTls& tls,
                                                                Identity identity,
                                                                std::chrono::milliseconds timeout) {
  auto conn = std::make_unique<UpstreamConnection>(
      executor, identity == Identity::Hub ? tls.hub_identity->get() : tls.anonymous);
  conn->identity = identity;
  const auto deadline = base::Clock::now() + timeout;

  tcp::resolver resolver(executor);
  auto flags =
      net::is_ip_literal(address.host) ? tcp::resolver::numeric_host : tcp::resolver::flags{};
  auto [rec, endpoints] = co_await resolver.async_resolve(
      address.host, address.port, flags | tcp::resolver::numeric_service, net::kNoThrow);
  if (rec) co_return make_error("resolve " + address.host + ": " + rec.message());

  auto& tcp_layer = beast::get_lowest_layer(conn->stream);
  tcp_layer.expires_at(deadline);
  auto [cec, endpoint] = co_await tcp_layer.async_connect(endpoints, net::kNoThrow);
  if (cec) co_return make_error("connect " + address.url + ": " + cec.message());
  tcp_layer.socket().set_option(tcp::no_delay(true));

  const std::string& verify_name =
      tls.server_name_override.empty() ? address.host : tls.server_name_override;
  if (auto named = net::name_server(conn->stream.native_handle(), verify_name, tls.verify_peer);
      !named) {
    co_return make_error("cannot verify " + address.url + ": " + named.error().message);
  }
  auto [hec] = co_await conn->stream.async_handshake(net::kNoThrow);
  if (hec) co_return make_error("TLS handshake with " + address.url + ": " + hec.message());
  co_return std::move(conn);
}

UpstreamPool::UpstreamPool(asio::any_io_executor executor, const ServerSet& servers,
                           const net::UpstreamTls& tls, HubMetrics& metrics)
    : executor_(std::move(executor)),
      servers_(servers),
      tls_(tls),
      metrics_(metrics),
      idle_(servers.size() * 2) {
  for (std::size_t i = 0; i < servers.size(); ++i) {
    reused_.push_back(&metrics_.upstream_connections.with({servers.address(i).url, "reused"}));
    // YurtHub's dialer labels the series with the address it dials.
    open_.push_back(&metrics_.closable_conns.with({servers.authority(i)}));
  }
}

std::deque<UpstreamConnectionPtr>& UpstreamPool::idle_for(std::size_t server, Identity identity) {
  return idle_[server * 2 + static_cast<std::size_t>(identity)];
}

UpstreamConnectionPtr UpstreamPool::take_usable(std::size_t server, Identity identity,
                                                Resend resend) {
  auto& idle = idle_for(server, identity);
  const auto now = base::Clock::now();
  // A renewed certificate retires the connections made with the old one: the apiserver checks a
  // client certificate's validity on every request, so they would fail once it expires.
  const auto current = identity == Identity::Hub ? tls_.hub_identity->get() : tls_.anonymous;
  while (!idle.empty()) {
    UpstreamConnectionPtr conn = std::move(idle.back());
    idle.pop_back();
    const auto idle_time = now - conn->idle_since;
    const bool unpolled = resend == Resend::OnClose && idle_time < kUnpolledIdle;
    if (idle_time < kIdleTimeout && conn->context == current &&
        (unpolled ? holds_nothing_unread(*conn) : looks_alive(*conn))) {
      conn->reused = true;
      return conn;
    }
  }
  return nullptr;
}

UpstreamConnectionPtr UpstreamPool::reuse(std::size_t server, Identity identity, Resend resend) {
  auto conn = take_usable(server, identity, resend);
  if (conn) reused_[server]->inc();
  return conn;
}

asio::awaitable<Result<UpstreamConnectionPtr>> UpstreamPool::dial(std::size_t server,
                                                                  Identity identity) {
  auto fresh = co_await connect_upstream(executor_, servers_.address(server), tls_, identity,
                                         kConnectTimeout);
  if (!fresh) co_return fresh.error();
  (*fresh)->server = server;
  (*fresh)->open_gauge = open_[server];
  open_[server]->add(1);
  metrics_.upstream_connections.with({servers_.address(server).url, "opened"}).inc();
  co_return std::move(*fresh);
}

void UpstreamPool::release(UpstreamConnectionPtr connection) {
  if (!servers_.healthy(connection->server)) return;  // do not keep connections to a bad server
  auto& idle = idle_for(connection->server, connection->identity);
  connection->idle_since = base::Clock::now();
  beast::get_lowest_layer(connection->stream).expires_never();
  idle.push_back(std::move(connection));
  // Over the bound: close the oldest.
  while (idle.size() > kMaxIdlePerKey) idle.pop_front();
}

void UpstreamPool::drop_server(std::size_t server) {
  idle_for(server, Identity::Hub).clear();
  idle_for(server, Identity::Bearer).clear();
}

void UpstreamPool::drop_all() {
  for (auto& idle : idle_) idle.clear();
}

void UpstreamPool::reap() {
  const auto now = base::Clock::now();
  for (auto& idle : idle_) {
    std::erase_if(idle, [&](const UpstreamConnectionPtr& c) {
      return now - c->idle_since >= kIdleTimeout || !looks_alive(*c);
    });
  }
}

std::size_t UpstreamPool::idle_count() const {
  std::size_t n = 0;
  for (const auto& idle : idle_) n += idle.size();
  return n;
}

}  // namespace yurthub::hub
