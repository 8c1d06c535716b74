// Fuzz target for the hub's request path before forwarding: Beast's request_parser with the
// session's limits (hub/client_connection.h) reads a request head, classify_request() reads it,
// the forwarder's header handling (net/http_io.h strip_hop_by_hop with the parser's framing,
// version and Host) rewrites it, net/http_framing.h writes it, and the body is read through a
// buffer_body as the forwarder relays it. Oracles: the head the hub would send upstream parses
// again with the same method, target and body framing (Content-Length or chunked), so no request
// can change how the apiserver delimits its body; every body byte arrives once.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>

#include "hub/client_connection.h"
#include "kube/request_info.h"
#include "net/http_framing.h"
#include "net/http_io.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;
namespace http = boost::beast::http;
namespace asio = boost::asio;

namespace {

std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

// Reads the body after the head as the forwarder does; returns the bytes read.
std::size_t read_body(http::request_parser<http::buffer_body>& parser, std::string_view rest) {
  char piece[512];
  std::size_t total = 0;
  for (int rounds = 0; !parser.is_done() && rounds < 100000; ++rounds) {
    parser.get().body().data = piece;
    parser.get().body().size = sizeof(piece);
    boost::beast::error_code ec;
    const std::size_t used = parser.put(asio::buffer(rest.data(), rest.size()), ec);
    rest.remove_prefix(used);
    total += sizeof(piece) - parser.get().body().size;
    if (ec == http::error::need_buffer) continue;
    if (ec || used == 0) break;
  }
  return total;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in = fuzz::as_text(data, size);
  http::request_parser<http::buffer_body> parser;
  parser.header_limit(hub::kMaxRequestHeaderBytes);
  parser.body_limit(hub::kMaxRequestBodyBytes);
  boost::beast::error_code ec;
  const std::size_t head_bytes = parser.put(asio::buffer(in.data(), in.size()), ec);
  if (ec || !parser.is_header_done()) return 0;

  auto& req = parser.get();
  const kube::RequestInfo info = kube::classify_request(sv(req.method_string()), sv(req.target()),
                                                        sv(req[http::field::user_agent]));
  (void)info.is_long_running();
  // The framing as the parser read it (the forwarder frames the upstream body from it): the
  // message's own chunked() reads only the first Transfer-Encoding header.
  const bool chunked = parser.chunked();
  const bool has_length = parser.content_length().has_value();
  const auto parsed_length = parser.content_length();
  // One pass, as the forwarder does: hop-by-hop headers out, the parser's framing in.
  net::strip_hop_by_hop(
      req, net::is_upgrade_request(req),
      net::BodyFraming{parser.chunked(), parsed_length
                                             ? std::optional<std::uint64_t>(*parsed_length)
                                             : std::nullopt});
  req.version(11);
  req.set(http::field::host, "apiserver.example:6443");
  const std::size_t lengths = req.count(http::field::content_length);
  const std::size_t codings = req.count(http::field::transfer_encoding);
  fuzz::check(lengths + codings <= 1, "the forwarded head has more than one framing header");
  const std::string head = net::message_head(req.base());

  http::request_parser<http::empty_body> again;
  again.header_limit(2 * hub::kMaxRequestHeaderBytes);
  again.body_limit(hub::kMaxRequestBodyBytes);  // Beast's default (1 MiB) is below the hub's
  again.put(asio::buffer(head), ec);
  fuzz::check(!ec && again.is_header_done(), "the forwarded head does not parse");
  const auto& sent = again.get();
  fuzz::check(sent.method_string() == req.method_string(), "the method changed");
  fuzz::check(sent.target() == req.target(), "the target changed");
  fuzz::check(sent.chunked() == chunked, "the forwarded head changed chunked framing");
  fuzz::check(sent.has_content_length() == (has_length && !chunked) &&
                  again.content_length() == (chunked ? boost::none : parsed_length),
              "the forwarded head changed Content-Length framing");

  const std::size_t body = read_body(parser, in.substr(head_bytes));
  if (parser.is_done() && has_length && !chunked) {
    fuzz::check(body == *parsed_length, "a body of other than Content-Length bytes");
  }
  return 0;
}
