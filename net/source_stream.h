// SourceStream: one client connection to where the hub's own background clients read from: the
// hub's plain proxy port, or a leader hub's HTTPS multiplexer port (mutual TLS, presenting the
// node's client certificate and verifying that the leader's certificate names its IP). One stream
// type for Beast's reads and writes, which go to whichever layer is in use. Used by the Reflector
// (net/reflector.h) and by the pool's leader health probes (pool/leader_hubs.h).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "base/result.h"
#include "net/timed_socket.h"

namespace yurthub::net {

// Where to connect: host (an IP address) and port, in plain HTTP, or over TLS with `tls`
// (presenting its client certificate, verifying the server's against its CA and host).
struct SourceAddress {
  std::string host;
  unsigned short port = 0;
  std::shared_ptr<boost::asio::ssl::context> tls;  // null: plain HTTP

  // "host:port" (an IPv6 address in brackets), for Host headers and messages.
  std::string authority() const;
};

class SourceStream {
 public:
  using executor_type = boost::asio::any_io_executor;

  // A stream for `address` (TLS when it has a context). Not connected yet.
  SourceStream(boost::asio::any_io_executor executor, const SourceAddress& address);

  // Connects and, over TLS, completes the handshake; bounded by the socket's deadline (set it
  // first with socket().expires_after()). An error says what failed.
  boost::asio::awaitable<Status> connect();

  executor_type get_executor() { return executor_; }
  TimedSocket& socket() { return tls_ ? tls_->next_layer() : *plain_; }
  // Ends pending operations at once (they complete with an error).
  void close() { socket().close(); }

  template <class Buffers, class Token>
  auto async_read_some(const Buffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const Buffers& b) {
          if (tls_) {
            tls_->async_read_some(b, std::move(handler));
          } else {
            plain_->async_read_some(b, std::move(handler));
          }
        },
        token, buffers);
  }
  template <class Buffers, class Token>
  auto async_write_some(const Buffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const Buffers& b) {
          if (tls_) {
            tls_->async_write_some(b, std::move(handler));
          } else {
            plain_->async_write_some(b, std::move(handler));
          }
        },
        token, buffers);
  }

 private:
  boost::asio::any_io_executor executor_;
  SourceAddress address_;  // its context is kept for the connection's life
  std::optional<TimedSocket> plain_;
  std::optional<boost::beast::ssl_stream<TimedSocket>> tls_;
};

}  // namespace yurthub::net
