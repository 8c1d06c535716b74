// The member templates of RequestBody (hub/request_body.h); see there. Included by
// hub/request_body.cc, which instantiates them for the hub's two client streams, and by the request
// path's tests over in-memory streams (test/hub/proxy_session_streams_test.cc).
//
// Reading and sending a client's request body; see request_body.h.
#pragma once

#include "hub/request_body.h"

#include <algorithm>

#include "base/clock.h"
#include "net/http_framing.h"
#include "net/http_io.h"
#include "net/streams.h"

namespace yurthub::hub {
namespace asio = boost::asio;
namespace beast = boost::beast;

namespace request_body_detail {

// A request head up to this size, with no body, goes to an upstream connection back from the pool
// in one synchronous write (net::TimedSocket::write_some never waits). The socket takes it at
// once: the connection's last request was answered, so nothing of it is left in the kernel's send
// queue, and the send buffer holds 16 KiB or more (Linux's tcp_wmem default). An asynchronous
// write that completes at once still costs a trip through the event loop: on the small GET's
// path that was one epoll_wait in three and about 2.5k instructions (docs/benchmarks.md).
constexpr std::size_t kAtOnceHeadBytes = 4096;

// Errors reading from a client while relaying its request body.
inline std::optional<kube::Failure> client_body_failure(const boost::system::error_code& ec) {
  if (ec == http::error::body_limit) return kube::Failure::BodyTooLarge;
  if (net::is_malformed_http(ec)) return kube::Failure::BadRequest;
  return std::nullopt;  // the client went away or timed out: nobody to answer
}

}  // namespace request_body_detail

template <class Stream>
RequestBody<Stream>::RequestBody(std::shared_ptr<ClientConnection<Stream>> client,
                                 std::chrono::steady_clock::time_point deadline)
    : client_(std::move(client)), deadline_(deadline) {}

template <class Stream>
asio::awaitable<typename RequestBody<Stream>::WholeRead> RequestBody<Stream>::read_whole(
    RequestParser& parser, std::size_t limit) {
  auto& req = parser.get();
  char* buf = client_->relay();
  while (!parser.is_done()) {
    const auto ec = co_await read_piece(parser, buf);
    if (ec) co_return WholeRead{false, request_body_detail::client_body_failure(ec)};
    bytes_.append(buf, kRelayBufferBytes - req.body().size);
    if (bytes_.size() > limit) co_return WholeRead{false, kube::Failure::BodyTooLarge};
  }
  whole_ = true;
  co_return WholeRead{true, std::nullopt};
}

template <class Stream>
template <class Upstream>
asio::awaitable<typename RequestBody<Stream>::Sent> RequestBody<Stream>::send(
    Upstream& up, RequestParser& parser, ForwardResult& result) {
  auto& req = parser.get();
  net::write_message_head(client_->request_head, req);
  // The parser's framing, which Forwarder::prepare set as the header (reading the header back
  // would parse its Transfer-Encoding again).
  net::BodyFramer framer(client_->request_head, parser.chunked());
  if (whole_) {
    result.request_bytes += bytes_.size();
    beast::get_lowest_layer(up.stream).expires_after(kClientIoTimeout);
    auto [wec, wn] =
        co_await asio::async_write(up.stream, framer.frame(bytes_, true), net::kNoThrow);
    co_return wec ? Sent::UpstreamFailed : Sent::All;
  }
  if (parser.is_done() && up.reused &&
      client_->request_head.size() <= request_body_detail::kAtOnceHeadBytes) {
    // No body, and a connection back from the pool (see request_body_detail::kAtOnceHeadBytes).
    // Should the socket not take it all, the connection is closed, and the Forwarder sends the
    // request again on a fresh one, as for a pooled connection the apiserver had closed.
    const bool sent = net::write_at_once(up.stream, framer.frame({}, true));
    co_return sent ? Sent::All : Sent::UpstreamFailed;
  }
  char* buf = client_->relay();
  do {
    std::string_view piece;
    if (!parser.is_done()) {
      const auto rec = co_await read_piece(parser, buf);
      if (rec) {
        if (auto failure = request_body_detail::client_body_failure(rec)) result.end = *failure;
        co_return Sent::ClientFailed;
      }
      piece = {buf, kRelayBufferBytes - req.body().size};
      result.request_bytes += piece.size();
      if (piece.empty() && !parser.is_done()) continue;  // a chunk header, no data yet
    }
    beast::get_lowest_layer(up.stream).expires_after(kClientIoTimeout);
    auto [wec, wn] =
        co_await asio::async_write(up.stream, framer.frame(piece, parser.is_done()), net::kNoThrow);
    if (wec) co_return Sent::UpstreamFailed;
  } while (!framer.done());
  co_return Sent::All;
}

template <class Stream>
asio::awaitable<boost::system::error_code> RequestBody<Stream>::read_piece(RequestParser& parser,
                                                                           char* buf) {
  auto& req = parser.get();
  req.body().data = buf;
  req.body().size = kRelayBufferBytes;
  beast::get_lowest_layer(client_->stream)
      .expires_at(std::min(base::Clock::now() + kClientIoTimeout, deadline_));
  auto [ec, n] =
      co_await http::async_read_some(client_->stream, client_->buffer, parser, net::kNoThrow);
  if (ec == http::error::need_buffer) ec = {};  // the buffer is full: not an error
  co_return ec;
}

}  // namespace yurthub::hub
