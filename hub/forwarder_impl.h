// The member templates of Forwarder (hub/forwarder.h); see there. Included by hub/forwarder.cc,
// which instantiates them for the hub's two client streams, and by the request path's tests over
// in-memory streams (test/hub/proxy_session_streams_test.cc, forwarder_streams_test.cc, over
// test_support::MemoryUpstreams).
//
// Serving one request: server choice, sending, cache decisions and fallback; see forwarder.h.
#pragma once

#include "hub/forwarder.h"

#include <tuple>

#include "base/clock.h"
#include "base/log.h"
#include "base/url.h"
#include "hub/hooks/cache_hooks.h"
#include "hub/request_body_impl.h"
#include "hub/request_head.h"
#include "hub/response_relay.h"
#include "hub/upstream_pool.h"
#include "kube/media_type.h"
#include "net/http_framing.h"
#include "net/http_io.h"

namespace yurthub::hub {
namespace asio = boost::asio;
namespace beast = boost::beast;

namespace forwarder_detail {

// How long a write waits for the replay of the same object's offline writes.
constexpr std::chrono::seconds kReplayWait{30};
// A body the cache keys an answer by (a TokenRequest: a few hundred bytes) is read whole first.
constexpr std::size_t kMaxKeyedBodyBytes = 64u << 10;

// How long the apiserver may take to send the response header: its own request timeout (60 s,
// or the client's `timeout`/`timeoutSeconds`) plus a margin.
inline std::chrono::seconds response_header_timeout(const kube::RequestInfo& info) {
  if (info.timeout_seconds && *info.timeout_seconds > 0 && !info.is_watch()) {
    return std::chrono::seconds(*info.timeout_seconds + 15);
  }
  return kUpstreamResponseTimeout;
}

}  // namespace forwarder_detail

template <class Stream, class Pool>
Forwarder<Stream, Pool>::Forwarder(std::shared_ptr<ClientConnection<Stream>> client, Worker& worker,
                                   Pool& upstreams)
    : client_(std::move(client)),
      worker_(worker),
      shared_(worker.shared()),
      upstreams_(upstreams) {}

template <class Stream, class Pool>
void Forwarder<Stream, Pool>::upstream_failed(std::size_t server, const char* kind) {
  shared_.metrics.upstream_errors.with({shared_.servers.address(server).url, kind}).inc();
  if (shared_.health) shared_.health->probe_soon(server);
}

template <class Stream, class Pool>
asio::awaitable<ForwardResult> Forwarder<Stream, Pool>::forward(RequestParser& parser,
                                                                const kube::RequestInfo& info,
                                                                bool client_keep_alive) {
  prepare(parser, info);
  if (framing_doubt_) client_keep_alive = false;
  if (pool_scope_) return answer_shared(parser, info, client_keep_alive);
  // Not a coroutine itself: most requests wait for nothing and go straight to the exchange, and a
  // coroutine frame per request costs as much as a header lookup.
  const bool wait = (plan_.filter && !shared_.filters->ready()) || plan_.keyed_body ||
                    probes_pending() || replay_pending(info);
  if (wait) return wait_then_exchange(parser, info, client_keep_alive);
  return exchange(parser, info, client_keep_alive);
}

template <class Stream, class Pool>
asio::awaitable<ForwardResult> Forwarder<Stream, Pool>::wait_then_exchange(
    RequestParser& parser, const kube::RequestInfo& info, bool client_keep_alive) {
  // The waits are coroutines, called only when there is something to wait for.
  std::optional<Refusal> refusal;
  if (plan_.filter && !shared_.filters->ready()) refusal = co_await wait_for_filters();
  if (refusal) {
    co_return co_await fail(refusal->failure, refusal->detail, parser, client_keep_alive,
                            ForwardResult{});
  }
  if (plan_.keyed_body) {
    const auto read = co_await body_->read_whole(parser, forwarder_detail::kMaxKeyedBodyBytes);
    if (read.failure) {
      co_return co_await fail(*read.failure, "while reading the request body", parser, false,
                              ForwardResult{});
    }
    if (!read.complete) co_return ForwardResult{};  // the client went away
    // Sent whole, framed by its length.
    net::set_body_framing(parser.get(), false, body_->bytes().size());
  }
  if (probes_pending() || replay_pending(info)) refusal = co_await wait_for_servers(info);
  if (refusal) {
    co_return co_await fail(refusal->failure, refusal->detail, parser, client_keep_alive,
                            ForwardResult{});
  }
  co_return co_await exchange(parser, info, client_keep_alive);
}

template <class Stream, class Pool>
void Forwarder<Stream, Pool>::prepare(RequestParser& parser, const kube::RequestInfo& info) {
  auto& req = parser.get();
  client_version_ = req.version();
  body_.emplace(client_, base::Clock::now() + shared_.options.request_body_timeout);
  // Each check below looks a header up only if the one pass found it.
  const RequestHeadFields has = scan_request_fields(req);
  upgrade_ = has.upgrade && has.connection && net::is_upgrade_request(req);
  has_body_ = parser.chunked() || parser.content_length().value_or(0) > 0;
  identity_ =
      has.authorization && net::carries_bearer_token(req) ? Identity::Bearer : Identity::Hub;
  framing_doubt_ = has.connection && names_framing_in_connection(req);
  if (identity_ == Identity::Bearer)
    client_authorization_ = std::string(req[http::field::authorization]);
  // The journal's own replay (cache/journal_replay.h) is never journaled nor held behind itself.
  if (has.replay) {
    if (auto replay = req.find(kReplayHeader); replay != req.end())
      replaying_ = net::secrets_equal(replay->value(), shared_.replay_token);
    req.erase(kReplayHeader);
  }
  CacheHooks* cache = shared_.cache;
  // A HEAD's response has no body for the cache or the filters to read.
  const bool head_only = req.method() == http::verb::head;
  if (shared_.filters && !head_only) filter_ = shared_.filters->filter(info);
  pool_scope_ = shared_.pool && !head_only && !upgrade_ && !replaying_ &&
                req.method() == http::verb::get && shared_.pool->pool_scope(info);
  const bool cacheable = cache && cache->cacheable(info);
  plan_ = plan_request(head_only, cacheable, filter_ != nullptr,
                       cacheable && cache->wants_request_body(info));

  // Framing from the parser, never from the headers as sent, in the same pass.
  const auto length = parser.content_length();
  net::strip_hop_by_hop(
      req, upgrade_,
      net::BodyFraming{parser.chunked(),
                       length ? std::optional<std::uint64_t>(*length) : std::nullopt});
  req.version(11);
  if (framing_doubt_) req.keep_alive(false);  // the apiserver closes it: never back in the pool
  if (identity_ == Identity::Hub) {
    // The node's identity is lent to local clients as it is, never with their own additions.
    if (has.authorization || has.impersonation) strip_borrowed_identity(req);
    if (auto bearer = shared_.tls.hub_authorization(); !bearer.empty()) {
      req.set(http::field::authorization, bearer);
    }
  }
  if (plan_.ask_json() && !kube::is_plain_json_accept(std::string_view(req[http::field::accept]))) {
    req.set(http::field::accept, "application/json");
  }
}

template <class Stream, class Pool>
asio::awaitable<std::optional<typename Forwarder<Stream, Pool>::Refusal>>
Forwarder<Stream, Pool>::wait_for_filters() {
  FilterHooks* filters = shared_.filters;
  // Polled: readiness flips once per process, so a waiter list would buy nothing.
  const bool ready =
      co_await poll_until([filters] { return filters->ready(); }, shared_.filters_ready_wait,
                          std::chrono::milliseconds(100));
  if (ready) co_return std::nullopt;
  co_return Refusal{kube::Failure::FiltersNotReady,
                    "the informers of nodes, nodepools and services have not synced"};
}

template <class Stream, class Pool>
bool Forwarder<Stream, Pool>::probes_pending() const {
  return shared_.health && !shared_.health->initial_probes_done();
}

template <class Stream, class Pool>
bool Forwarder<Stream, Pool>::replay_pending(const kube::RequestInfo& info) const {
  CacheHooks* cache = shared_.cache;
  return cache && !replaying_ && kube::is_write_verb(info.verb) && cache->write_pending(info) &&
         shared_.servers.any_healthy();
}

template <class Stream, class Pool>
asio::awaitable<std::optional<typename Forwarder<Stream, Pool>::Refusal>>
Forwarder<Stream, Pool>::wait_for_servers(const kube::RequestInfo& info) {
  if (probes_pending()) {
    // Servers start unhealthy; a request in the hub's first moments would otherwise be answered
    // from the cache although the apiserver is fine. One probe takes at most its attempts'
    // timeouts.
    const auto& o = shared_.options;
    co_await poll_until(
        [health = shared_.health] { return health->initial_probes_done(); },
        std::chrono::seconds(o.heartbeat_timeout_seconds * o.heartbeat_failed_retry + 1),
        std::chrono::milliseconds(20));
  }
  if (!replay_pending(info)) co_return std::nullopt;
  // Writes made offline to this object go first, in order (design §6).
  const bool replayed =
      co_await poll_until([&] { return !replay_pending(info); }, forwarder_detail::kReplayWait,
                          std::chrono::milliseconds(100));
  if (replayed) co_return std::nullopt;
  co_return Refusal{kube::Failure::ReplayPending, info.resource + " \"" + info.name + "\""};
}

template <class Stream, class Pool>
asio::awaitable<ForwardResult> Forwarder<Stream, Pool>::exchange(RequestParser& parser,
                                                                 const kube::RequestInfo& info,
                                                                 bool keep_alive) {
  auto& req = parser.get();
  ForwardResult result;
  ServerSet::Mask tried;
  std::string last_error;
  bool fresh_retry_used = false;
  // Decided once: a request without a body may be sent again on a fresh connection, so a kept
  // connection for it needs no liveness poll (UpstreamPool::reuse) and is retried if found closed.
  const Resend resend = has_body_ ? Resend::Never : Resend::OnClose;
  for (;;) {
    auto server = shared_.servers.pick(tried);
    if (!server && last_error.empty()) {
      co_return co_await unreachable(kube::Failure::NoHealthyServer, "every apiserver is unhealthy",
                                     parser, info, keep_alive, result);
    }
    if (!server) {
      co_return co_await unreachable(kube::Failure::UpstreamUnreachable, last_error, parser, info,
                                     keep_alive, result);
    }
    // A retry goes on a fresh connection: the other idle ones may have been closed as well.
    std::unique_ptr<Upstream> up =
        fresh_retry_used ? nullptr : upstreams_.reuse(*server, identity_, resend);
    if (!up) {
      auto acquired = co_await upstreams_.dial(*server, identity_);
      if (!acquired) {
        // Nothing was sent: trying another healthy server is safe for any method.
        upstream_failed(*server, "connect");
        YH_LOG(Warning) << acquired.error().message;
        tried[*server] = true;
        last_error = acquired.error().message;
        continue;
      }
      up = std::move(*acquired);
    }
    req.set(http::field::host, shared_.servers.authority(*server));
    ActiveScope scope(client_->active, up.get(), *server);
    response_.reset();  // its fields go with the arena's reset
    ResponseParser& rp = response_.emplace(std::piecewise_construct, std::tuple<>{},
                                           std::tuple{client_->response_arena.fresh()});
    boost::system::error_code ec;
    const Attempt outcome = co_await attempt(*up, parser, rp, info, result, ec);
    if (outcome == Attempt::Header) {
      co_return co_await relay_response(std::move(up), rp, parser, info, keep_alive, result);
    }
    // A pooled connection the apiserver had closed: retry once on a fresh one if the request
    // can be sent again (it had no body, so nothing is lost).
    if (outcome != Attempt::ClientFailed && outcome != Attempt::Timeout && up->reused &&
        resend == Resend::OnClose && !fresh_retry_used) {
      fresh_retry_used = true;
      continue;
    }
    co_return co_await attempt_failed(outcome, *server, ec, parser, info, result);
  }
}

template <class Stream, class Pool>
asio::awaitable<typename Forwarder<Stream, Pool>::Attempt> Forwarder<Stream, Pool>::attempt(
    Upstream& up, RequestParser& parser, ResponseParser& rp, const kube::RequestInfo& info,
    ForwardResult& result, boost::system::error_code& ec) {
  const auto sent = co_await body_->send(up, parser, result);
  if (sent == RequestBody<Stream>::Sent::ClientFailed) co_return Attempt::ClientFailed;
  if (sent == RequestBody<Stream>::Sent::UpstreamFailed) co_return Attempt::Closed;
  limit_response_parser(rp, parser.get().method() == http::verb::head);
  beast::get_lowest_layer(up.stream).expires_after(forwarder_detail::response_header_timeout(info));
  auto [rec, rn] = co_await http::async_read_header(up.stream, up.buffer, rp, net::kNoThrow);
  ec = rec;
  if (!ec) co_return Attempt::Header;
  if (ec == beast::error::timeout) co_return Attempt::Timeout;
  co_return net::is_malformed_http(ec) ? Attempt::BadResponse : Attempt::Closed;
}

template <class Stream, class Pool>
asio::awaitable<ForwardResult> Forwarder<Stream, Pool>::attempt_failed(
    Attempt outcome, std::size_t server, const boost::system::error_code& ec, RequestParser& parser,
    const kube::RequestInfo& info, ForwardResult result) {
  const std::string& url = shared_.servers.address(server).url;
  switch (outcome) {
    case Attempt::ClientFailed:
      if (auto failure = result.failure()) {
        co_return co_await fail(*failure, "while reading the request body", parser, false, result);
      }
      result.keep_alive = false;
      co_return result;
    case Attempt::Timeout:
      upstream_failed(server, "timeout");
      co_return co_await unreachable(kube::Failure::UpstreamTimeout, url, parser, info, false,
                                     result);
    case Attempt::BadResponse:
      upstream_failed(server, "bad_response");
      co_return co_await fail(kube::Failure::BadUpstreamResponse, url + ": " + ec.message(), parser,
                              false, result);
    default:
      upstream_failed(server, "closed");
      co_return co_await unreachable(kube::Failure::UpstreamClosed, url, parser, info, false,
                                     result);
  }
}

template <class Stream, class Pool>
asio::awaitable<ForwardResult> Forwarder<Stream, Pool>::relay_response(
    std::unique_ptr<Upstream> up, ResponseParser& rp, RequestParser& parser,
    const kube::RequestInfo& info, bool keep_alive, ForwardResult result) {
  const std::string& url = shared_.servers.address(up->server).url;
  ResponseRelay<Stream, Pool>& relay =
      relay_.emplace(client_, worker_, upstreams_, info, std::move(up), rp);
  const auto& res = rp.get();
  if (upgrade_ && res.result() == http::status::switching_protocols) {
    co_return co_await relay.tunnel(result);
  }
  const ResponseHead head = response_head_facts(rp, plan_.cache || plan_.filter);
  const ClientSide client{client_version_, keep_alive && parser.is_done(), info.is_long_running(),
                          shared_.draining};
  const ResponsePlan plan = plan_response(plan_, head, client);
  if (plan.unread_because) {
    YH_LOG(Warning) << (plan_.filter ? "filters" : "cache") << ": the response to "
                    << kube::verb_name(info.verb) << " " << info.path << " is "
                    << plan.unread_because << "; relayed as sent";
  }
  std::unique_ptr<ResponseTap> tap;
  if (plan.tap) {
    tap = shared_.cache->tap(info, head.code, body_->bytes());
  }
  ForwardResult relayed =
      co_await relay.relay(plan, tap.get(), filter_.get(), client_version_, result);
  const std::optional<StreamEnd> broke = relayed.stream_end();
  if (relayed.status != 0 || !broke) co_return relayed;
  // The response broke before any of it reached the client: answered as if the apiserver had
  // broken before its header, or with the reason its body could not be read.
  switch (*broke) {
    case StreamEnd::UpstreamClosed:
      co_return co_await unreachable(kube::Failure::UpstreamClosed, url, parser, info, false,
                                     relayed);
    case StreamEnd::UpstreamTimeout:
      co_return co_await unreachable(kube::Failure::UpstreamTimeout, url, parser, info, false,
                                     relayed);
    case StreamEnd::FilterError:
      co_return co_await fail(kube::Failure::BadUpstreamResponse,
                              url + ": a response the hub's filters cannot read", parser, false,
                              relayed);
    default:
      co_return relayed;
  }
}

template <class Stream, class Pool>
asio::awaitable<bool> Forwarder<Stream, Pool>::poll_until(std::function<bool()> done,
                                                          std::chrono::steady_clock::duration limit,
                                                          std::chrono::milliseconds period) {
  net::Timer timer(client_->write_watchdog.get_executor());
  const auto deadline = base::Clock::now() + limit;
  while (!done()) {
    if (base::Clock::now() >= deadline || shared_.draining) co_return false;
    timer.expires_after(period);
    co_await timer.async_wait(net::kNoThrow);
  }
  co_return true;
}

template <class Stream, class Pool>
asio::awaitable<ForwardResult> Forwarder<Stream, Pool>::fail(kube::Failure failure,
                                                             const std::string& detail,
                                                             RequestParser& parser, bool keep_alive,
                                                             ForwardResult result) {
  const kube::ApiError error = kube::api_error(failure, detail);
  // A request whose body was not read to the end leaves the connection unusable.
  keep_alive = keep_alive && parser.is_done() && !shared_.draining;
  beast::get_lowest_layer(client_->stream).expires_after(kClientIoTimeout);
  const std::optional<int> retry_after =
      failure == kube::Failure::FiltersNotReady || failure == kube::Failure::ReplayPending
          ? std::optional<int>(1)
          : std::nullopt;
  const bool written = co_await net::write_api_error(client_->stream, client_version_, keep_alive,
                                                     error, retry_after);
  result.end = failure;
  result.status = written ? error.code : 0;
  result.keep_alive = written && keep_alive;
  co_return result;
}

}  // namespace yurthub::hub
