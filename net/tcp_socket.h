// net::TcpSocket: the TCP socket type of the hub's connections (accepted by the listeners,
// wrapped by net::TimedSocket), on the io_context's own executor.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace yurthub::net {

// The executor of the hub's sockets: the io_context's own, not the type-erased any_io_executor.
// Asio's and Beast's composed operations copy and move the stream's executor at every step of a
// read or write; with any_io_executor that was about 1.5k instructions of a small GET (callgrind,
// docs/benchmarks.md). Coroutines keep any_io_executor.
using IoExecutor = boost::asio::io_context::executor_type;
using TcpSocket = boost::asio::basic_stream_socket<boost::asio::ip::tcp, IoExecutor>;

// The io_context executor under `executor`. REQUIRES: `executor` runs on an io_context (every
// executor of the hub and its tests does).
inline IoExecutor io_executor(const boost::asio::any_io_executor& executor) {
  return static_cast<boost::asio::io_context&>(
             boost::asio::query(executor, boost::asio::execution::context))
      .get_executor();
}

}  // namespace yurthub::net
