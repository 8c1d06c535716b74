// The client-side stream types a proxy session can run over: plain TCP (the 10261 loopback
// listener kubelet uses) and TLS (the 10268 listener in-cluster pods use). Sessions, the forwarder
// and the tunnel are templates over these two and are instantiated for exactly them.
#pragma once

#include <type_traits>

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

}  // namespace yurthub::net
