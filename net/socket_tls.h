// net::SocketTls: a client TLS stream over a net::TimedSocket in which OpenSSL reads and writes
// the socket's descriptor itself. Asio's ssl::stream (what beast::ssl_stream wraps) runs OpenSSL
// over a BIO pair instead: every ciphertext byte is copied from the socket into the pair and back
// out, and each SSL call is several trips through its engine (docs/benchmarks.md, "TLS on the
// descriptor"). The hub's connections to the apiservers (hub/upstream_pool.h) use this stream;
// the listeners keep beast::ssl_stream.
//
// An operation calls SSL_read/SSL_write/SSL_connect at once and, when OpenSSL wants the socket
// readable or writable, waits for it with the TimedSocket's async_wait (so the socket's deadlines
// bound the waits) and calls again. Errors are those of Asio's stream: asio::error::eof for the
// peer's close_notify, the ssl category for TLS errors (ssl::error::stream_truncated for a close
// without close_notify), the system category for the socket's.
//
// Contract: one read and one write may be pending at a time (each its own direction), as on
// Asio's stream. REQUIRES: the io_context is run by one thread (every hub context is): a wait
// begins right after OpenSSL found the socket empty, with no other thread able to take the
// readiness in between. Not thread-safe.
#pragma once

#include <openssl/ssl.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <string>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/socket_base.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>

#include "net/timed_socket.h"

namespace yurthub::net {

class SocketTls {
 public:
  using executor_type = TimedSocket::executor_type;
  using next_layer_type = TimedSocket;

  // The largest write gathered into one piece: a TLS record's plaintext. A longer first buffer is
  // written straight from where it lies.
  static constexpr std::size_t kGatherBytes = 16 * 1024;

  // A client stream with `context`'s settings (certificates, verification). REQUIRES: `context`
  // outlives the stream.
  SocketTls(const boost::asio::any_io_executor& executor, boost::asio::ssl::context& context);
  ~SocketTls();
  SocketTls(const SocketTls&) = delete;
  SocketTls& operator=(const SocketTls&) = delete;

  executor_type get_executor() noexcept { return socket_.get_executor(); }
  TimedSocket& next_layer() noexcept { return socket_; }
  // The OpenSSL connection, for settings before the handshake (server name, verification).
  SSL* native_handle() noexcept { return ssl_; }
  // Whether OpenSSL holds bytes read from the socket that no read has returned yet.
  bool holds_unread() const;

  // The client handshake, on the connected socket. Completes with (error_code).
  template <class Token>
  auto async_handshake(Token&& token) {
    return start<void(boost::system::error_code)>(Call::Handshake, {}, {},
                                                  std::forward<Token>(token));
  }
  // Reads into the first non-empty buffer of `buffers`. Completes with (error_code, bytes).
  template <class Buffers, class Token>
  auto async_read_some(const Buffers& buffers, Token&& token) {
    return start<void(boost::system::error_code, std::size_t)>(Call::Read, first_buffer(buffers),
                                                               {}, std::forward<Token>(token));
  }
  // Writes some of `buffers`: the first buffer alone when it is a record long or more, else the
  // leading buffers gathered up to a record. Completes with (error_code, bytes).
  template <class Buffers, class Token>
  auto async_write_some(const Buffers& buffers, Token&& token) {
    return start<void(boost::system::error_code, std::size_t)>(Call::Write, {}, gather(buffers),
                                                               std::forward<Token>(token));
  }
  // Synchronous, and never waiting: what OpenSSL and the socket take right now, else
  // would_block (what net::write_at_once relies on, as with TimedSocket).
  template <class Buffers>
  std::size_t write_some(const Buffers& buffers, boost::system::error_code& ec) {
    const Outcome outcome = call(Call::Write, {}, gather(buffers));
    ec = outcome.want == Want::Nothing ? outcome.error
                                       : make_error_code(boost::asio::error::would_block);
    return outcome.bytes;
  }

 private:
  enum class Call { Handshake, Read, Write };
  enum class Want { Nothing, Readable, Writable };
  struct Outcome {
    Want want = Want::Nothing;
    boost::system::error_code error;
    std::size_t bytes = 0;
  };

  // One attempt of `what`, never waiting.
  Outcome call(Call what, boost::asio::mutable_buffer in, boost::asio::const_buffer out);
  // Gives OpenSSL the socket's descriptor, once it is connected.
  void attach();
  bool attached() const;

  template <class Buffers>
  static boost::asio::mutable_buffer first_buffer(const Buffers& buffers) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      if (boost::asio::mutable_buffer b(*it); b.size() != 0) return b;
    }
    return {};
  }
  template <class Buffers>
  boost::asio::const_buffer gather(const Buffers& buffers) {
    auto it = boost::asio::buffer_sequence_begin(buffers);
    const auto end = boost::asio::buffer_sequence_end(buffers);
    while (it != end && boost::asio::const_buffer(*it).size() == 0) ++it;
    if (it == end) return {};
    const boost::asio::const_buffer first(*it);
    auto next = std::next(it);
    while (next != end && boost::asio::const_buffer(*next).size() == 0) ++next;
    if (first.size() >= kGatherBytes || next == end) return first;  // nothing to gather with
    gathered_.clear();
    for (; it != end && gathered_.size() < kGatherBytes; ++it) {
      const boost::asio::const_buffer b(*it);
      const std::size_t take = std::min(b.size(), kGatherBytes - gathered_.size());
      gathered_.append(static_cast<const char*>(b.data()), take);
    }
    return boost::asio::buffer(gathered_);
  }

  // The composed operation: calls OpenSSL, waits for the socket as it asks, calls again.
  struct Operation {
    SocketTls* tls;
    Call what;
    boost::asio::mutable_buffer in;
    boost::asio::const_buffer out;
    Outcome outcome;
    bool started = false;
    bool posted = false;  // completing after the first call: through the executor, not inline

    template <class Self>
    void operator()(Self& self, boost::system::error_code waited = {}) {
      if (posted) return finish(self);
      const bool first = !started;
      started = true;
      if (waited) {
        outcome = Outcome{Want::Nothing, waited, 0};
      } else {
        outcome = tls->call(what, in, out);
        if (outcome.want != Want::Nothing) {
          tls->socket_.async_wait(outcome.want == Want::Readable
                                      ? boost::asio::socket_base::wait_read
                                      : boost::asio::socket_base::wait_write,
                                  std::move(self));
          return;
        }
      }
      if (!first) return finish(self);
      posted = true;
      boost::asio::post(std::move(self));
    }

    template <class Self>
    void finish(Self& self) {
      if constexpr (requires { self.complete(outcome.error); }) {  // the handshake
        self.complete(outcome.error);
      } else {
        self.complete(outcome.error, outcome.bytes);
      }
    }
  };

  template <class Signature, class Token>
  auto start(Call what, boost::asio::mutable_buffer in, boost::asio::const_buffer out,
             Token&& token) {
    if (what == Call::Handshake) attach();
    return boost::asio::async_compose<Token, Signature>(Operation{this, what, in, out, {}}, token,
                                                        socket_.get_executor());
  }

  TimedSocket socket_;
  SSL* ssl_ = nullptr;
  std::string gathered_;  // a write's leading buffers, gathered into one record
};

}  // namespace yurthub::net
