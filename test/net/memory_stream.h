// test_support::MemoryStream: one end of an in-memory, two-way byte pipe with what the hub's
// request path asks of a stream (net::TimedSocket's interface): asynchronous reads and writes,
// synchronous ones that never wait, deadlines, and socket() with cancel, shutdown and close. The
// relay's tests (test/hub/response_relay_streams_test.cc) run the hub's code over a pair of them,
// one for the client and one for the apiserver, with no socket and no sleep: the test holds the
// other end of each and writes, reads and closes it between polls of the io_context.
//
// Writes never wait (the pipe is unbounded); a read waits until the other end writes or closes.
// Completions are posted to the handler's executor, as a socket's are. Deadlines are kept but
// never fire: timeouts are tested over sockets (test/hub/proxy_deadlines_test.cc).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/socket_base.hpp>

#include "base/clock.h"

namespace yurthub::test_support {

namespace memory_stream_detail {

// A read waiting for bytes.
struct PendingRead {
  virtual ~PendingRead() = default;
  virtual void complete(boost::system::error_code ec) = 0;
};

// One direction: what one end wrote and the other has not read yet.
struct Pipe {
  std::string bytes;
  bool writer_closed = false;  // the writing end closed or shut down: eof after the bytes
  bool reader_closed = false;  // the reading end closed: writes fail
  std::unique_ptr<PendingRead> reader;

  void wake(boost::system::error_code ec = {}) {
    if (auto read = std::move(reader)) read->complete(ec);
  }
  // Moves what is there into `buffers`; eof when nothing is there and nothing will come.
  template <class Buffers>
  std::size_t take(const Buffers& buffers, boost::system::error_code& ec) {
    ec = {};
    const std::size_t n = boost::asio::buffer_copy(buffers, boost::asio::buffer(bytes));
    bytes.erase(0, n);
    if (n == 0 && boost::asio::buffer_size(buffers) > 0) {
      if (writer_closed)
        ec = boost::asio::error::eof;
      else
        ec = boost::asio::error::would_block;
    }
    return n;
  }
};

// Posts `handler(ec, n)` to its associated executor (else `fallback`).
template <class Handler>
void post_completion(Handler handler, const boost::asio::any_io_executor& fallback,
                     boost::system::error_code ec, std::size_t n) {
  auto executor = boost::asio::get_associated_executor(handler, fallback);
  boost::asio::post(executor, [h = std::move(handler), ec, n]() mutable { std::move(h)(ec, n); });
}

template <class Handler, class Buffers>
struct Read final : PendingRead {
  Read(Handler h, const Buffers& b, std::shared_ptr<Pipe> p, boost::asio::any_io_executor e)
      : handler(std::move(h)), buffers(b), pipe(std::move(p)), executor(std::move(e)) {}
  void complete(boost::system::error_code ec) override {
    std::size_t n = 0;
    if (!ec) n = pipe->take(buffers, ec);
    post_completion(std::move(handler), executor, ec, n);
  }
  Handler handler;
  Buffers buffers;
  std::shared_ptr<Pipe> pipe;
  boost::asio::any_io_executor executor;
};

}  // namespace memory_stream_detail

class MemoryStream {
 public:
  using executor_type = boost::asio::any_io_executor;
  using lowest_layer_type = MemoryStream;

  // Two connected ends.
  static std::pair<MemoryStream, MemoryStream> pair(const executor_type& executor) {
    auto a_to_b = std::make_shared<memory_stream_detail::Pipe>();
    auto b_to_a = std::make_shared<memory_stream_detail::Pipe>();
    return {MemoryStream(executor, b_to_a, a_to_b), MemoryStream(executor, a_to_b, b_to_a)};
  }

  MemoryStream(MemoryStream&&) noexcept = default;
  MemoryStream& operator=(MemoryStream&&) noexcept = default;
  ~MemoryStream() {
    if (in_) close();
  }

  executor_type get_executor() const { return executor_; }
  MemoryStream& socket() { return *this; }
  MemoryStream& lowest_layer() { return *this; }

  void expires_after(base::Clock::duration after) { deadline_ = base::Clock::now() + after; }
  void expires_at(base::Clock::time_point at) { deadline_ = at; }
  void expires_never() { deadline_ = base::Clock::time_point::max(); }
  base::Clock::time_point deadline() const { return deadline_; }

  // A pending read completes with operation_aborted; the stream stays open.
  void cancel(boost::system::error_code& ec) {
    ec = {};
    in_->wake(boost::asio::error::operation_aborted);
  }
  // This end writes no more: the other end reads eof after what was written.
  void shutdown(boost::asio::socket_base::shutdown_type, boost::system::error_code& ec) {
    ec = {};
    out_->writer_closed = true;
    out_->wake();
  }
  // Both directions end: the other end reads eof and its writes fail; a pending read here
  // completes with operation_aborted.
  void close(boost::system::error_code& ec) {
    ec = {};
    close();
  }
  void close() {
    closed_ = true;
    out_->writer_closed = true;
    out_->wake();
    in_->reader_closed = true;
    in_->bytes.clear();
    in_->wake(boost::asio::error::operation_aborted);
  }
  bool is_open() const { return !closed_; }

  template <class Buffers, class Token>
  auto async_read_some(const Buffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const Buffers& b) {
          using Read = memory_stream_detail::Read<decltype(handler), Buffers>;
          auto read = std::make_unique<Read>(std::move(handler), b, in_, executor_);
          if (closed_) {
            read->complete(boost::asio::error::bad_descriptor);
          } else if (!in_->bytes.empty() || in_->writer_closed ||
                     boost::asio::buffer_size(b) == 0) {
            read->complete({});
          } else {
            in_->reader = std::move(read);
          }
        },
        token, buffers);
  }

  template <class Buffers, class Token>
  auto async_write_some(const Buffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const Buffers& b) {
          boost::system::error_code ec;
          const std::size_t n = write_some(b, ec);
          memory_stream_detail::post_completion(std::move(handler), executor_, ec, n);
        },
        token, buffers);
  }

  // Synchronous, never waiting: what is there, else would_block (or eof).
  template <class Buffers>
  std::size_t read_some(const Buffers& buffers, boost::system::error_code& ec) {
    if (closed_) {
      ec = boost::asio::error::bad_descriptor;
      return 0;
    }
    return in_->take(buffers, ec);
  }
  template <class Buffers>
  std::size_t write_some(const Buffers& buffers, boost::system::error_code& ec) {
    ec = {};
    if (closed_ || out_->writer_closed || out_->reader_closed) {
      ec = boost::asio::error::broken_pipe;
      return 0;
    }
    std::size_t n = 0;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      const boost::asio::const_buffer piece(*it);
      out_->bytes.append(static_cast<const char*>(piece.data()), piece.size());
      n += piece.size();
    }
    if (n > 0) out_->wake();
    return n;
  }

  // The test's side of a pipe.
  void write(std::string_view bytes) {
    boost::system::error_code ec;
    write_some(boost::asio::buffer(bytes), ec);
  }
  // Everything the other end wrote that was not read yet.
  std::string take_written() { return std::exchange(in_->bytes, {}); }
  // The other end closed or shut down its writing side.
  bool other_end_done() const { return in_->writer_closed; }
  // A read is waiting on this end.
  bool read_pending() const { return in_->reader != nullptr; }

 private:
  MemoryStream(executor_type executor, std::shared_ptr<memory_stream_detail::Pipe> in,
               std::shared_ptr<memory_stream_detail::Pipe> out)
      : executor_(std::move(executor)), in_(std::move(in)), out_(std::move(out)) {}

  executor_type executor_;
  std::shared_ptr<memory_stream_detail::Pipe> in_;   // what the other end wrote
  std::shared_ptr<memory_stream_detail::Pipe> out_;  // what this end writes
  base::Clock::time_point deadline_ = base::Clock::time_point::max();
  bool closed_ = false;
};

}  // namespace yurthub::test_support
