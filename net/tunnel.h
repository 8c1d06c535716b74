// tunnel_streams(): after a protocol upgrade (101 Switching Protocols: kubectl exec, attach,
// port-forward over SPDY or WebSocket) the hub copies bytes both ways until either side closes,
// then closes both. Bytes already buffered past the HTTP headers on either side are delivered
// first. An idle tunnel is closed after `idle_timeout` (kubelet's streaming idle timeout is 4 h).
// Called by the Forwarder; worker-thread only.
#pragma once

#include <chrono>
#include <cstdint>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include "net/http_io.h"
#include "net/streams.h"
#include "net/timer.h"

namespace yurthub::net {

struct TunnelBytes {
  std::uint64_t client_to_upstream = 0;
  std::uint64_t upstream_to_client = 0;
};

namespace tunnel_detail {

struct Activity {
  std::chrono::steady_clock::time_point last = base::Clock::now();
  bool done = false;
};

template <class From, class To>
boost::asio::awaitable<void> copy(From& from, To& to, std::uint64_t& counter, Activity& activity) {
  char buf[16 * 1024];
  for (;;) {
    auto [rec, n] = co_await from.async_read_some(boost::asio::buffer(buf), kNoThrow);
    if (rec) break;
    activity.last = base::Clock::now();
    auto [wec, wn] = co_await boost::asio::async_write(to, boost::asio::buffer(buf, n), kNoThrow);
    if (wec) break;
    counter += n;
  }
  // One side is finished: close both so the other direction's pending read ends too.
  activity.done = true;
  cancel_socket(from);
  cancel_socket(to);
}

template <class A, class B>
boost::asio::awaitable<void> idle_watch(A& a, B& b, Activity& activity,
                                        std::chrono::steady_clock::duration idle_timeout) {
  auto executor = co_await boost::asio::this_coro::executor;
  net::Timer timer(executor);
  while (!activity.done) {
    timer.expires_after(std::chrono::seconds(30));
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;  // cancelled: the copies finished
    if (base::Clock::now() - activity.last > idle_timeout) {
      cancel_socket(a);
      cancel_socket(b);
      co_return;
    }
  }
}

}  // namespace tunnel_detail

template <class Client, class Upstream>
boost::asio::awaitable<TunnelBytes> tunnel_streams(
    Client& client, boost::beast::flat_buffer& client_pending, Upstream& upstream,
    boost::beast::flat_buffer& upstream_pending, std::chrono::steady_clock::duration idle_timeout) {
  using namespace boost::asio::experimental::awaitable_operators;
  TunnelBytes bytes;
  boost::beast::get_lowest_layer(client).expires_never();
  boost::beast::get_lowest_layer(upstream).expires_never();
  if (client_pending.size() > 0) {
    auto [ec, n] = co_await boost::asio::async_write(upstream, client_pending.data(), kNoThrow);
    if (ec) co_return bytes;
    bytes.client_to_upstream += n;
    client_pending.consume(n);
  }
  if (upstream_pending.size() > 0) {
    auto [ec, n] = co_await boost::asio::async_write(client, upstream_pending.data(), kNoThrow);
    if (ec) co_return bytes;
    bytes.upstream_to_client += n;
    upstream_pending.consume(n);
  }
  tunnel_detail::Activity activity;
  co_await ((tunnel_detail::copy(client, upstream, bytes.client_to_upstream, activity) &&
             tunnel_detail::copy(upstream, client, bytes.upstream_to_client, activity)) ||
            tunnel_detail::idle_watch(client, upstream, activity, idle_timeout));
  co_return bytes;
}

}  // namespace yurthub::net
