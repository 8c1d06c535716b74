// HTTP/1.1 response writing for the fake apiserver over its TLS stream: whole replies (a body up
// to 2 KiB gets Content-Length, a larger one is chunked, as Go's net/http does), and the pieces of
// a streamed chunked response (header, one chunk, terminating chunk) for lists and watches. Every
// response carries the headers a kube-apiserver sets (Audit-Id, Cache-Control, Date, ...).
// Coroutines on the connection's executor; errors are returned, never thrown.
#pragma once

#include <chrono>
#include <string_view>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "test/fake_apiserver/status.h"

namespace yurthub::fake {

using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;
using ErrorCode = boost::system::error_code;
namespace http = boost::beast::http;

// How long one write may take before the connection is dropped (a client that stopped reading).
inline constexpr std::chrono::seconds kWriteTimeout{60};

// Sets Audit-Id, Cache-Control, Content-Type, Date and the priority-and-fairness headers.
void set_common_headers(http::fields& fields, std::string_view content_type);

// Writes `reply` completely.
boost::asio::awaitable<ErrorCode> write_reply(TlsStream& stream, const Reply& reply,
                                              bool keep_alive);

// Writes the status line and headers of a chunked response; `headers` are set over the defaults.
boost::asio::awaitable<ErrorCode> write_chunked_header(TlsStream& stream, unsigned status,
                                                       std::string_view content_type,
                                                       bool keep_alive,
                                                       const HeaderList& headers = {});
// Writes one chunk (`data` must not be empty).
boost::asio::awaitable<ErrorCode> write_chunk(TlsStream& stream, std::string_view data);
// Writes the terminating zero-length chunk.
boost::asio::awaitable<ErrorCode> write_last_chunk(TlsStream& stream);

}  // namespace yurthub::fake
