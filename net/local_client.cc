// One-shot requests to the hub's own proxy port; see local_client.h.
#include "net/local_client.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "base/url.h"
#include "net/http_io.h"
#include "net/timed_socket.h"

namespace yurthub::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

asio::awaitable<Result<LocalResponse>> local_request(asio::any_io_executor executor,
                                                     std::string host, unsigned short port,
                                                     LocalRequest request,
                                                     std::chrono::milliseconds timeout) {
  const std::string where = base::host_port(host, std::to_string(port));
  boost::system::error_code aec;
  const auto address = asio::ip::make_address(host, aec);
  if (aec) co_return make_error("proxy host " + host + " is not an IP address");
  net::TimedSocket stream(executor);
  stream.expires_after(timeout);
  auto [cec] = co_await stream.async_connect(asio::ip::tcp::endpoint(address, port), kNoThrow);
  if (cec) co_return make_error("connecting to " + where + ": " + cec.message());

  const auto verb = http::string_to_verb(request.method);
  if (verb == http::verb::unknown) co_return make_error("unknown method " + request.method);
  http::request<http::string_body> req{verb, request.target, 11};
  req.set(http::field::host, where);
  for (const auto& [name, value] : request.headers) {
    if (!value.empty()) req.set(name, value);
  }
  req.keep_alive(false);
  req.body() = std::move(request.body);
  req.prepare_payload();
  stream.expires_after(timeout);
  auto [wec, wn] = co_await http::async_write(stream, req, kNoThrow);
  if (wec) co_return make_error(request.method + " " + request.target + ": " + wec.message());

  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxLocalResponseBytes);
  stream.expires_after(timeout);
  auto [rec, rn] = co_await http::async_read(stream, buffer, parser, kNoThrow);
  if (rec) {
    co_return make_error(request.method + " " + request.target +
                         ": reading the response: " + rec.message());
  }
  co_return LocalResponse{parser.get().result_int(), std::move(parser.get().body())};
}

}  // namespace yurthub::net
