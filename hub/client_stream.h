// Helpers for streaming a response to a client (a relayed watch, an offline watch): while a
// response streams, a "client watcher" read is pending on the client socket, so that a client
// leaving ends the stream at once; the stream's own deadline cannot then bound writes (both
// directions would share it), so a separate watchdog timer does. Used by ResponseRelay and
// ClientResponseWriter; worker-thread only.
#pragma once

#include <memory>
#include <type_traits>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>

#include "hub/client_connection.h"
#include "net/http_framing.h"
#include "net/http_io.h"
#include "net/spawn.h"

namespace yurthub::hub {

namespace client_stream_detail {
template <class Stream>
boost::asio::awaitable<void> watch_client(std::shared_ptr<ClientConnection<Stream>> client) {
  // A streaming client sends nothing (Go clients never pipeline), so a completed read means it
  // left: end the stream instead of waiting for the next event.
  char sink[512];
  for (;;) {
    auto [ec, n] =
        co_await client->stream.async_read_some(boost::asio::buffer(sink), net::kNoThrow);
    if (!client->watching_client) co_return;
    if (ec) {
      client->active.stop(StreamEnd::ClientGone);
      co_return;
    }
  }
}
}  // namespace client_stream_detail

// Starts watching the client for leaving; the connection is closed after the stream.
template <class Stream>
void start_client_watch(const std::shared_ptr<ClientConnection<Stream>>& client) {
  if (client->watching_client) return;
  boost::beast::get_lowest_layer(client->stream).expires_never();
  client->watching_client = true;
  net::spawn_detached(client->write_watchdog.get_executor(),
                      client_stream_detail::watch_client(client), "client watcher");
}

template <class Stream>
void stop_client_watch(ClientConnection<Stream>& client) {
  if (!client.watching_client) return;
  client.watching_client = false;
  net::cancel_socket(client.stream);  // wakes the watcher's pending read
}

// Cancels the client socket if the next write does not finish within kClientIoTimeout.
template <class Stream>
void arm_write_watchdog(const std::shared_ptr<ClientConnection<Stream>>& client) {
  client->write_watchdog.expires_after(kClientIoTimeout);
  client->write_watchdog.async_wait(
      [weak = std::weak_ptr<ClientConnection<Stream>>(client)](boost::system::error_code ec) {
        if (ec) return;
        if (auto c = weak.lock()) net::cancel_socket(c->stream);
      });
}

// Plain TCP: writes what the socket takes right now, without the event loop (an async write
// that completes at once still costs a trip through it, and a watch event would also arm and
// cancel the watchdog). Returns the bytes written; 0 for TLS, or when nothing could be written.
template <class Stream, class Buffers>
std::size_t write_now(Stream& stream, const Buffers& buffers, boost::system::error_code& ec) {
  if constexpr (std::is_same_v<Stream, net::PlainStream>) {
    const std::size_t n = stream.write_some(buffers, ec);  // never waits
    if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) ec = {};
    return n;
  } else {
    (void)stream;
    (void)buffers;
    return 0;
  }
}

// Writes `buffers` to the client: what the socket takes at once, the rest asynchronously, under
// the watchdog for a streaming response (whose stream deadline the client watcher's read owns),
// else under the stream's own kClientIoTimeout. False if the client is gone.
template <class Stream, class Buffers>
boost::asio::awaitable<bool> write_to_client(
    const std::shared_ptr<ClientConnection<Stream>>& client, const Buffers& buffers,
    bool streaming) {
  boost::system::error_code ec;
  const std::size_t total = boost::asio::buffer_size(buffers);
  const std::size_t now = write_now(client->stream, buffers, ec);
  if (ec) co_return false;
  if (now == total) co_return true;
  boost::beast::buffers_suffix<Buffers> rest(buffers);
  rest.consume(now);
  if (streaming)
    arm_write_watchdog(client);
  else
    boost::beast::get_lowest_layer(client->stream).expires_after(kClientIoTimeout);
  auto [wec, n] = co_await boost::asio::async_write(client->stream, rest, net::kNoThrow);
  if (streaming) client->write_watchdog.cancel();
  co_return !wec;
}

// Writes raw bytes to a streaming client under the watchdog.
template <class Stream, class Buffers>
boost::asio::awaitable<bool> write_streaming(
    const std::shared_ptr<ClientConnection<Stream>>& client, const Buffers& buffers) {
  co_return co_await write_to_client(client, buffers, true);
}

// The last chunk of a chunked response, so a client can tell a clean end from a cut.
template <class Stream>
boost::asio::awaitable<bool> end_chunked_stream(
    const std::shared_ptr<ClientConnection<Stream>>& client) {
  co_return co_await write_streaming(
      client, boost::asio::buffer(net::kLastChunk.data(), net::kLastChunk.size()));
}

}  // namespace yurthub::hub
