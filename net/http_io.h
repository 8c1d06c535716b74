// Small HTTP helpers shared by the proxy session, the forwarder and the admin server: writing a
// hub-made response (Kubernetes Status errors, plain text), and stripping hop-by-hop headers
// (RFC 9110 §7.6.1, as Go's httputil.ReverseProxy does) from messages relayed between peers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http.hpp>

#include "kube/status.h"
#include "net/header_arena.h"

namespace yurthub::net {

inline constexpr auto kNoThrow = boost::asio::as_tuple(boost::asio::use_awaitable);

// The field helpers below take Beast's fields on the heap (boost::beast::http::fields) or in a
// HeaderArena (ArenaFields); both are instantiated in http_io.cc.

// Removes hop-by-hop headers and any header named in Connection. With `keep_upgrade`, the
// Connection and Upgrade headers of a protocol upgrade survive. A name in Connection never
// removes Content-Length, Transfer-Encoding, Host or Authorization: `Connection: Content-Length`
// would otherwise strip the framing of a body the hub still sends on (request smuggling on a
// pooled connection that carries the node's identity).
// With `framing`, the same pass also sets the framing headers as set_body_framing does: a
// Content-Length or Transfer-Encoding that already says what the hub will send stays where it is,
// every other one goes, and the missing one is added at the end. One pass instead of three lookups
// by name in the fields' tree on every relayed response (docs/benchmarks.md).
struct BodyFraming {
  bool chunked = false;
  std::optional<std::uint64_t> content_length;  // read only when not chunked
};
template <class Allocator>
void strip_hop_by_hop(boost::beast::http::basic_fields<Allocator>& fields, bool keep_upgrade,
                      std::optional<BodyFraming> framing = std::nullopt);

// Sets a relayed message's framing headers from what the parser read, never from the headers as
// they arrived: chunked (Transfer-Encoding: chunked, no Content-Length), a Content-Length, or no
// body (neither header).
template <class Allocator>
void set_body_framing(boost::beast::http::basic_fields<Allocator>& fields, bool chunked,
                      std::optional<std::uint64_t> content_length);

// Whether `text` starts with `prefix`, ASCII letters compared without regard to case (as HTTP field
// names and auth schemes are; no locale is consulted).
bool istarts_with(std::string_view text, std::string_view prefix);

// Whether the Authorization header carries a bearer token: the scheme compared without regard to
// case, as kube-apiserver's bearer-token authenticator does, followed by a non-empty token. The
// HTTPS port's gate and the Forwarder's choice of identity both ask this one function, so that
// no spelling passes one and not the other.
template <class Allocator>
bool carries_bearer_token(const boost::beast::http::basic_fields<Allocator>& fields);

// True for `Connection: upgrade` + `Upgrade: ...` requests (exec, attach, port-forward).
template <class Allocator>
bool is_upgrade_request(const boost::beast::http::basic_fields<Allocator>& fields);

// Whether a read failed because Beast's parser found the message malformed (bad chunking, a bad
// header or status line), not because the peer closed or went quiet: the peer then gets a
// Status, where a peer that left gets nothing.
bool is_malformed_http(const boost::system::error_code& ec);

// A complete hub-made response with `body`: the one shape of every response the hub makes itself
// (Status errors, plain text), whether written by write_simple_response or, where there is no
// event loop to wait on, sent at once as its wire_text (a connection refused at the bounds).
boost::beast::http::response<boost::beast::http::string_body> simple_response(
    unsigned version, bool keep_alive, unsigned code, std::string_view content_type,
    std::string body, std::optional<int> retry_after = {});
// The bytes of `response` on the wire: status line, headers, body.
std::string wire_text(
    const boost::beast::http::response<boost::beast::http::string_body>& response);

// Writes a complete response with `body`; returns false if the write failed.
template <class Stream>
boost::asio::awaitable<bool> write_simple_response(Stream& stream, unsigned version,
                                                   bool keep_alive, unsigned code,
                                                   std::string_view content_type, std::string body,
                                                   std::optional<int> retry_after = {}) {
  auto res = simple_response(version, keep_alive, code, content_type, std::move(body), retry_after);
  auto [ec, n] = co_await boost::beast::http::async_write(stream, res, kNoThrow);
  co_return !ec;
}

// Writes a Kubernetes Status error response.
template <class Stream>
boost::asio::awaitable<bool> write_api_error(Stream& stream, unsigned version, bool keep_alive,
                                             const kube::ApiError& error,
                                             std::optional<int> retry_after = {}) {
  co_return co_await write_simple_response(stream, version, keep_alive, error.code,
                                           "application/json", kube::status_body(error),
                                           retry_after);
}

}  // namespace yurthub::net
