// The member templates of ProxySession (hub/proxy_session.h); see there. Included by
// hub/proxy_session.cc, which instantiates them for the hub's two client streams, and by the
// request path's tests over in-memory streams (test/hub/proxy_session_streams_test.cc).
//
// Client connections on the proxy listeners; see proxy_session.h.
#pragma once

#include "hub/proxy_session.h"

#include <tuple>

#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>

#include "base/clock.h"
#include "base/log.h"
#include "hub/session_gates.h"
#include "hub/watch_corrections.h"
#include "kube/bearer_token.h"
#include "net/http_io.h"

namespace yurthub::hub {
namespace asio = boost::asio;
namespace beast = boost::beast;

namespace proxy_session_detail {

inline std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }

// The request headers the session reads, found in one pass: each fields[name] is a search of
// Beast's field tree by case-insensitive name, and these were four of them per request. Each is
// the first value of its name, as fields[name] gives. The views are into the request's fields.
struct SessionHeaders {
  std::optional<std::string_view> user_agent, accept, content_type, expect;
};

inline SessionHeaders session_headers(const net::ArenaFields& fields) {
  SessionHeaders out;
  auto keep_first = [](std::optional<std::string_view>& slot, beast::string_view value) {
    if (!slot) slot = sv(value);
  };
  for (const auto& field : fields) {
    switch (field.name()) {
      case http::field::user_agent:
        keep_first(out.user_agent, field.value());
        break;
      case http::field::accept:
        keep_first(out.accept, field.value());
        break;
      case http::field::content_type:
        keep_first(out.content_type, field.value());
        break;
      case http::field::expect:
        keep_first(out.expect, field.value());
        break;
      default:
        break;
    }
  }
  return out;
}

}  // namespace proxy_session_detail

template <class Stream>
ProxySession<Stream>::ProxySession(std::shared_ptr<ClientConnection<Stream>> client, Worker& worker,
                                   const char* listener_name, bool bearer_required,
                                   const std::string& peer)
    : client_(std::move(client)),
      worker_(worker),
      shared_(worker.shared()),
      listener_name_(listener_name),
      bearer_required_(bearer_required || net::kIsTls<Stream>),
      privileged_peer_(ConnectionLimits::is_privileged(peer)),
      registration_(worker, this) {
  shared_.metrics.client_connections.with({listener_name_}).add(1);
}

template <class Stream>
ProxySession<Stream>::~ProxySession() {
  shared_.metrics.client_connections.with({listener_name_}).add(-1);
}

template <class Stream>
asio::awaitable<void> ProxySession<Stream>::run(std::shared_ptr<ProxySession> self) {
  co_await self->serve_connection();
  net::close_socket(self->client_->stream);
  self->client_->closed = true;
}

template <class Stream>
asio::awaitable<void> ProxySession<Stream>::serve_connection() {
  auto& tcp = beast::get_lowest_layer(client_->stream);
  if constexpr (net::kIsTls<Stream>) {
    tcp.expires_after(kClientIoTimeout);
    auto [ec] =
        co_await client_->stream.async_handshake(asio::ssl::stream_base::server, net::kNoThrow);
    if (ec) {
      YH_LOG(Debug) << "TLS handshake with a client failed: " << ec.message();
      co_return;
    }
    if (follower_port_ && !identify_follower()) co_return;
  }
  while (!shared_.draining) {
    RequestParser parser(std::piecewise_construct, std::tuple<>{},
                         std::tuple{client_->request_arena.fresh()});
    parser.header_limit(kMaxRequestHeaderBytes);
    parser.body_limit(kMaxRequestBodyBytes);
    idle_ = true;
    tcp.expires_after(kClientIdleTimeout);
    auto [ec, n] =
        co_await http::async_read_header(client_->stream, client_->buffer, parser, net::kNoThrow);
    idle_ = false;
    if (ec) {
      co_await reject_unreadable(ec);
      co_return;
    }
    const bool keep_alive = co_await serve(parser);
    if (!keep_alive) co_return;
  }
}

template <class Stream>
asio::awaitable<void> ProxySession<Stream>::reject_unreadable(const boost::system::error_code& ec) {
  // A client closing or idling out between requests is normal; a malformed request gets a
  // Status and the connection is closed (its framing can no longer be trusted).
  std::optional<kube::Failure> failure;
  if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
    failure = kube::Failure::HeaderTooLarge;
  } else if (ec == http::error::body_limit) {
    failure = kube::Failure::BodyTooLarge;
  } else if (net::is_malformed_http(ec)) {
    failure = kube::Failure::BadRequest;
  }
  if (!failure) co_return;
  shared_.metrics.failures.with({kube::failure_label(*failure)}).inc();
  YH_LOG(Info) << "rejected a request on the " << listener_name_ << " listener: " << ec.message();
  beast::get_lowest_layer(client_->stream).expires_after(kClientIoTimeout);
  co_await net::write_api_error(client_->stream, 11, false,
                                kube::api_error(*failure, ec.message()));
}

template <class Stream>
asio::awaitable<bool> ProxySession<Stream>::answer_error(
    kube::Failure failure, const std::string& detail, const kube::RequestInfo& info,
    RequestParser& parser, std::optional<int> retry_after, RequestSeries::Kind* kind) {
  const kube::ApiError error = kube::api_error(failure, detail);
  const bool keep_alive = parser.get().keep_alive() && parser.is_done() && !shared_.draining;
  beast::get_lowest_layer(client_->stream).expires_after(kClientIoTimeout);
  const bool written = co_await net::write_api_error(client_->stream, parser.get().version(),
                                                     keep_alive, error, retry_after);
  ForwardResult result;
  result.end = failure;
  result.status = error.code;
  record(info, result, base::Clock::now(), kind);
  co_return written&& keep_alive;
}

template <class Stream>
bool ProxySession<Stream>::classify(RequestParser& parser) {
  auto& req = parser.get();
  if (!proxy_session_detail::sv(req.target()).starts_with('/')) {
    // Absolute form ("GET http://host/api/v1/pods"): classified and forwarded as the path it
    // names, or what the hub decides (cache, filters, authority) would not be about what the
    // apiserver does.
    auto origin = kube::origin_form(proxy_session_detail::sv(req.target()));
    if (!origin) {
      info_.emplace();
      return false;
    }
    req.target(*origin);
  }
  const proxy_session_detail::SessionHeaders headers = proxy_session_detail::session_headers(req);
  // Classified straight into info_: moving a RequestInfo in costs a move of each of its strings.
  struct Classified {
    std::string_view method, target, user_agent;
    operator kube::RequestInfo() const {  // implicit: emplace converts with it
      return kube::classify_request(method, target, user_agent);
    }
  };
  kube::RequestInfo& info = info_.emplace(Classified{proxy_session_detail::sv(req.method_string()),
                                                     proxy_session_detail::sv(req.target()),
                                                     headers.user_agent.value_or("")});
  info.accept = headers.accept.value_or("");
  info.content_type = headers.content_type.value_or("");
  info.privileged_peer = privileged_peer_;
  // The same test as the Forwarder's choice of identity: a bearer caller is never the node.
  if (net::carries_bearer_token(req)) {
    const auto authorization = req[http::field::authorization];
    info.bearer_token =
        std::string(kube::bearer_token(proxy_session_detail::sv(authorization)).value_or(""));
  }
  expects_continue_ = beast::iequals(headers.expect.value_or(""), "100-continue");
  YH_LOG(Debug) << listener_name_ << " " << req.method_string() << " " << req.target() << " ("
                << info.component << ")";
  return true;
}

template <class Stream>
asio::awaitable<bool> ProxySession<Stream>::serve(RequestParser& parser) {
  const auto started = base::Clock::now();
  auto& req = parser.get();
  if (!classify(parser)) {
    co_return co_await answer_error(kube::Failure::BadRequest, "the request target is not a path",
                                    *info_, parser);
  }
  const kube::RequestInfo& info = *info_;
  if (follower_port_) co_return co_await serve_follower(parser);

  // The HTTPS port and the dummy IP are for in-cluster pods, which always send their
  // service-account token; a request without one would otherwise be sent with the node's identity.
  if (bearer_required_ && !net::carries_bearer_token(req)) {
    const std::string why = net::kIsTls<Stream>
                                ? "the hub's HTTPS port requires a bearer token"
                                : "the hub's port on the dummy interface requires a bearer token";
    co_return co_await answer_error(kube::Failure::Unauthorized, why, info, parser);
  }
  InFlight in_flight(shared_, worker_.request_series(), info);
  if (!in_flight.admitted()) {
    // Named, not a temporary in the co_await expression: g++ 12 destroys such a temporary twice.
    const std::string why =
        info.is_long_running()
            ? std::to_string(shared_.options.max_long_running_requests) +
                  " watches and tunnels open"
            : std::to_string(shared_.options.max_requests_in_flight) + " requests in flight";
    co_return co_await answer_error(kube::Failure::TooManyRequests, why, info, parser, 1,
                                    &in_flight.kind());
  }
  if (expects_continue_) {
    // The hub reads the body itself as it forwards it; tell the client to send it.
    req.erase(http::field::expect);
    static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
    beast::get_lowest_layer(client_->stream).expires_after(kClientIoTimeout);
    auto [ec, n] = co_await asio::async_write(
        client_->stream, asio::buffer(kContinue, sizeof kContinue - 1), net::kNoThrow);
    if (ec) co_return false;
  }

  Forwarder<Stream>& forwarder = forwarder_.emplace(client_, worker_);
  const ForwardResult result = co_await forwarder.forward(parser, info, req.keep_alive());
  forwarder_.reset();
  record(info, result, started, &in_flight.kind());
  co_return result.keep_alive;
}

template <class Stream>
void ProxySession<Stream>::record(const kube::RequestInfo& info, const ForwardResult& result,
                                  std::chrono::steady_clock::time_point started,
                                  RequestSeries::Kind* kind) {
  auto& m = shared_.metrics;
  std::optional<std::chrono::duration<double>> elapsed;
  if (!info.is_long_running() && result.status != 0) elapsed = base::Clock::now() - started;
  worker_.request_series().count(info, result.status, result.response_bytes, elapsed, kind);
  if (result.response_bytes) m.response_bytes.inc(result.response_bytes);
  if (result.request_bytes) m.request_bytes.inc(result.request_bytes);
  if (auto failure = result.failure()) m.failures.with({kube::failure_label(*failure)}).inc();
  if (auto end = result.stream_end()) m.streams_ended.with({stream_end_name(*end)}).inc();
}

template <class Stream>
void ProxySession<Stream>::on_server_health(std::size_t server, bool healthy) {
  client_->active.server_health_changed(server, healthy);
}

template <class Stream>
void ProxySession<Stream>::on_drain() {
  if (idle_) {
    net::cancel_socket(client_->stream);  // ends the wait for the next request
  } else {
    client_->active.hub_draining();
  }
  // A short request in progress finishes; its response carries Connection: close.
}

template <class Stream>
void ProxySession<Stream>::on_filters_changed() {
  request_corrections(client_);
}

}  // namespace yurthub::hub
