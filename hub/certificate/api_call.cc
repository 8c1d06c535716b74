// One request on its own connection; see api_call.h.
#include "hub/certificate/api_call.h"

#include <boost/beast/http.hpp>

#include "base/clock.h"
#include "hub/upstream_pool.h"
#include "hub/version.h"
#include "net/http_io.h"

namespace yurthub::hub {
namespace beast = boost::beast;
namespace http = beast::http;

boost::asio::awaitable<Result<ApiAnswer>> api_call(boost::asio::any_io_executor executor,
                                                   const ServerAddress& server,
                                                   const net::UpstreamTls& tls, ApiCall call,
                                                   std::chrono::milliseconds timeout) {
  const auto deadline = base::Clock::now() + timeout;
  auto connected = co_await connect_upstream(executor, server, tls, Identity::Hub, timeout);
  if (!connected) co_return connected.error();
  auto& stream = (*connected)->stream;
  beast::get_lowest_layer(stream).expires_at(deadline);

  http::request<http::string_body> req{call.method, call.target, 11};
  req.set(http::field::host, server.host + ":" + server.port);
  req.set(http::field::user_agent, std::string("yurthub/") + kVersion + " " + call.agent);
  req.set(http::field::accept, "application/json");
  if (auto bearer = tls.hub_authorization(); !bearer.empty()) {
    req.set(http::field::authorization, bearer);
  }
  if (!call.body.empty()) {
    req.set(http::field::content_type, call.content_type);
    req.body() = std::move(call.body);
  }
  req.keep_alive(false);
  req.prepare_payload();
  auto [wec, wn] = co_await http::async_write(stream, req, net::kNoThrow);
  if (wec)
    co_return make_error(ErrorCode::Unavailable, "sending to " + server.url + ": " + wec.message());

  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxApiAnswerBytes);
  auto [rec, rn] = co_await http::async_read(stream, (*connected)->buffer, parser, net::kNoThrow);
  if (rec) {
    co_return make_error(ErrorCode::Unavailable,
                         "reading the answer of " + server.url + ": " + rec.message());
  }
  co_return ApiAnswer{parser.get().result_int(), std::move(parser.get().body())};
}

}  // namespace yurthub::hub
