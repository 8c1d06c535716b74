// The client-side stream types a proxy session can run over: plain TCP (the 10261 loopback
// listener kubelet uses) and TLS (the 10268 listener in-cluster pods use). Sessions, the forwarder
// and the tunnel are templates over these two and are instantiated for exactly them.
#pragma once

#include <type_traits>

#include <boost/asio/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "net/timed_socket.h"

namespace yurthub::net {

using PlainStream = net::TimedSocket;
using TlsStream = boost::beast::ssl_stream<net::TimedSocket>;

template <class Stream>
inline constexpr bool kIsTls = std::is_same_v<Stream, TlsStream>;

// Cancels every pending operation on the stream's socket (reads, writes, handshakes). The
// operations complete with operation_aborted; the socket stays open. Used to end a stream from
// outside the coroutine that is blocked on it.
template <class Stream>
void cancel_socket(Stream& stream) {
  boost::system::error_code ignored;
  boost::beast::get_lowest_layer(stream).socket().cancel(ignored);
}

template <class Stream>
void close_socket(Stream& stream) {
  boost::system::error_code ignored;
  auto& socket = boost::beast::get_lowest_layer(stream).socket();
  socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

// Writes all of `buffers` without the event loop, through TLS or not (TimedSocket's synchronous
// writes never wait), for a caller that knows the socket takes them at once: cheaper than an
// asynchronous write that completes at once, which still goes through the event loop. False when
// the socket did not take them all; part of a TLS record may then have gone out, so the
// connection is closed.
template <class Stream, class Buffers>
bool write_at_once(Stream& stream, const Buffers& buffers) {
  boost::system::error_code ec;
  boost::asio::write(stream, buffers, ec);
  if (!ec) return true;
  close_socket(stream);
  return false;
}

}  // namespace yurthub::net
