// net::TimedSocket: a TCP stream whose reads, writes and connects are bounded by deadlines on
// base::Clock. It replaces beast::tcp_stream under every stream of the hub (net/streams.h, the
// upstream pool, the informer, the admin server, the loopback client) with the same contract:
//   - expires_after/expires_at/expires_never set the deadline of the next reads and of the next
//     writes, but not of a direction that has an operation pending (which keeps its own);
//   - when a pending operation's deadline passes, the socket is closed and the operations of the
//     direction that timed out complete with beast::error::timeout;
//   - an operation started after its deadline fails the same way.
// What differs is the cost: beast arms and cancels a steady_timer around every operation (a trip
// through the event loop for the cancelled wait); this stream keeps one lazy timer per
// connection that is re-armed only when it fires early or a deadline moves earlier. And it waits
// on base::Clock, so tests move time instead of sleeping (base::TestClock).
// Completion handlers keep their associated executor, allocator and cancellation slot.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include <boost/asio/associator.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/error.hpp>

#include "base/clock.h"
#include "net/tcp_socket.h"
#include "net/timer.h"

namespace yurthub::net {

namespace timed_socket_detail {

// One direction's deadline (connects count as writes, as in beast::basic_stream).
struct Direction {
  base::Clock::time_point deadline = base::Clock::time_point::max();
  int pending = 0;
  bool timed_out = false;
};

struct State : std::enable_shared_from_this<State> {
  explicit State(TcpSocket s) : socket(std::move(s)), timer(socket.get_executor()) {}

  TcpSocket socket;
  Timer timer;
  Direction read;
  Direction write;
  bool waiting = false;          // a wait of `timer` is pending
  std::uint64_t generation = 0;  // of the current wait; a cancelled one is stale

  // Called as an operation of `d` starts: a deadline already gone fails it, as beast does.
  void starting(Direction& d);
  // Keeps one wait pending until the earliest deadline of a direction with an operation.
  void arm();
  void on_timer(std::uint64_t wait);
  void close() noexcept;
};

// Wraps a completion handler: counts the operation done and reports a timeout as such. Its
// implicit move constructor moves the handler, as Asio's own wrappers do; clang-tidy finds a
// throw somewhere inside the handler types it is instantiated with (Asio's ops), not here.
template <class Handler>
struct Completion {  // NOLINT(bugprone-exception-escape)
  Handler handler;
  std::shared_ptr<State> state;
  Direction State::*direction;

  template <class... Args>
  void operator()(boost::system::error_code ec, Args&&... args) {
    Direction& d = (*state).*direction;
    if (ec && d.timed_out) ec = boost::beast::error::timeout;
    if (--d.pending == 0) d.timed_out = false;
    state.reset();
    std::move(handler)(ec, std::forward<Args>(args)...);
  }
};

}  // namespace timed_socket_detail

class TimedSocket {
 public:
  using executor_type = IoExecutor;
  using lowest_layer_type = TcpSocket;
  using endpoint_type = boost::asio::ip::tcp::endpoint;

  explicit TimedSocket(const boost::asio::any_io_executor& executor)
      : state_(std::make_shared<timed_socket_detail::State>(TcpSocket(io_executor(executor)))) {}
  explicit TimedSocket(TcpSocket socket)
      : state_(std::make_shared<timed_socket_detail::State>(std::move(socket))) {}
  ~TimedSocket() { state_->close(); }
  TimedSocket(const TimedSocket&) = delete;
  TimedSocket& operator=(const TimedSocket&) = delete;

  executor_type get_executor() noexcept { return state_->socket.get_executor(); }
  TcpSocket& socket() noexcept { return state_->socket; }
  lowest_layer_type& lowest_layer() noexcept { return state_->socket; }
  const lowest_layer_type& lowest_layer() const noexcept { return state_->socket; }

  void expires_after(base::Clock::duration after) { expires_at(base::Clock::now() + after); }
  void expires_at(base::Clock::time_point at);
  void expires_never() { expires_at(base::Clock::time_point::max()); }
  // Closes the socket; pending operations complete with operation_aborted.
  void close() { state_->close(); }

  template <class Buffers, class Token>
  auto async_read_some(const Buffers& buffers, Token&& token) {
    return start<void(boost::system::error_code, std::size_t)>(
        &timed_socket_detail::State::read, std::forward<Token>(token),
        [buffers](auto& socket, auto handler) {
          socket.async_read_some(buffers, std::move(handler));
        });
  }

  template <class Buffers, class Token>
  auto async_write_some(const Buffers& buffers, Token&& token) {
    return start<void(boost::system::error_code, std::size_t)>(
        &timed_socket_detail::State::write, std::forward<Token>(token),
        [buffers](auto& socket, auto handler) {
          socket.async_write_some(buffers, std::move(handler));
        });
  }

  // Waits until the socket is readable (wait_read) or writable (wait_write), within the deadline
  // of that direction. Completes with (error_code).
  template <class Token>
  auto async_wait(boost::asio::socket_base::wait_type type, Token&& token) {
    return start<void(boost::system::error_code)>(
        type == boost::asio::socket_base::wait_write ? &timed_socket_detail::State::write
                                                     : &timed_socket_detail::State::read,
        std::forward<Token>(token),
        [type](auto& socket, auto handler) { socket.async_wait(type, std::move(handler)); });
  }

  // Synchronous, and never waiting: what the socket takes (or holds) right now, else
  // would_block. For a caller that knows the socket is ready, and cheaper than an asynchronous
  // operation that completes at once (which still goes through the event loop). As with Beast's
  // streams, deadlines bound only the asynchronous operations.
  template <class Buffers>
  std::size_t write_some(const Buffers& buffers, boost::system::error_code& ec) {
    if (!never_wait(ec)) return 0;
    return state_->socket.write_some(buffers, ec);
  }
  template <class Buffers>
  std::size_t read_some(const Buffers& buffers, boost::system::error_code& ec) {
    if (!never_wait(ec)) return 0;
    return state_->socket.read_some(buffers, ec);
  }

  template <class Token>
  auto async_connect(const endpoint_type& endpoint, Token&& token) {
    return start<void(boost::system::error_code)>(
        &timed_socket_detail::State::write, std::forward<Token>(token),
        [endpoint](auto& socket, auto handler) {
          socket.async_connect(endpoint, std::move(handler));
        });
  }

  // Tries each endpoint in turn within the one deadline; completes with the one connected.
  template <class Endpoints, class Token>
  auto async_connect(const Endpoints& endpoints, Token&& token) {
    return start<void(boost::system::error_code, endpoint_type)>(
        &timed_socket_detail::State::write, std::forward<Token>(token),
        [endpoints](auto& socket, auto handler) {
          boost::asio::async_connect(socket, endpoints, std::move(handler));
        });
  }

 private:
  // Makes the socket's synchronous operations report would_block instead of waiting (a system
  // call the first time only). The asynchronous ones are unaffected.
  bool never_wait(boost::system::error_code& ec) {
    auto& socket = state_->socket;
    if (!socket.non_blocking()) socket.non_blocking(true, ec);
    return !ec;
  }

  template <class Signature, class Token, class Operation>
  auto start(timed_socket_detail::Direction timed_socket_detail::State::*direction, Token&& token,
             Operation operation) {
    return boost::asio::async_initiate<Token, Signature>(
        [state = state_, direction, operation = std::move(operation)](auto handler) mutable {
          auto& d = (*state).*direction;
          state->starting(d);
          ++d.pending;
          state->arm();
          auto& socket = state->socket;
          operation(socket, timed_socket_detail::Completion<std::decay_t<decltype(handler)>>{
                                std::move(handler), std::move(state), direction});
        },
        token);
  }

  std::shared_ptr<timed_socket_detail::State> state_;
};

}  // namespace yurthub::net

// The wrapped handler keeps the caller's executor, allocator and cancellation slot.
template <template <class, class> class Associator, class Handler, class DefaultCandidate>
struct boost::asio::associator<Associator, yurthub::net::timed_socket_detail::Completion<Handler>,
                               DefaultCandidate> : Associator<Handler, DefaultCandidate> {
  static typename Associator<Handler, DefaultCandidate>::type get(
      const yurthub::net::timed_socket_detail::Completion<Handler>& c) noexcept {
    return Associator<Handler, DefaultCandidate>::get(c.handler);
  }
  static auto get(const yurthub::net::timed_socket_detail::Completion<Handler>& c,
                  const DefaultCandidate& candidate) noexcept
      -> decltype(Associator<Handler, DefaultCandidate>::get(c.handler, candidate)) {
    return Associator<Handler, DefaultCandidate>::get(c.handler, candidate);
  }
};
