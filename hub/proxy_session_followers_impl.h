// The member templates of ProxySession (hub/proxy_session.h): the multiplexer port; see there.
// Included by hub/proxy_session_followers.cc, which instantiates them for the hub's two client
// streams, and by the request path's tests over in-memory streams
// (test/hub/proxy_session_streams_test.cc).
//
// The multiplexer port (--multiplexer-port, 10269): where this hub, as its pool's leader, feeds
// the follower hubs of the pool from its shared watch cache (docs/pool-sharing.md). Unlike
// YurtHub's port, which authenticates nobody and forwards token-less requests to the apiserver as
// the leader's node, it trusts only client certificates of the cluster CA naming a node
// (CN system:node:<name>, O system:nodes) of this hub's pool, and serves only:
//   GET /healthz                 200 while this hub reaches the cloud and its copies are synced,
//                                else 503 with why (a follower then feeds from the cloud);
//   lists and watches of the pool-scope resources, unfiltered (each follower filters for its own
//                                clients), from the shared cache; 503 when it cannot answer one.
// Anything else gets 403, and nothing is ever forwarded. Members of ProxySession
// (proxy_session.h), split from proxy_session_impl.h.
#pragma once

#include <algorithm>

#include <boost/beast/core/string.hpp>

#include "base/clock.h"
#include "base/log.h"
#include "hub/proxy_session.h"
#include "hub/session_gates.h"
#include "net/http_io.h"

namespace yurthub::hub {
namespace asio = boost::asio;
namespace beast = boost::beast;

namespace followers_detail {

constexpr std::string_view kNodePrefix = "system:node:";

}  // namespace followers_detail

template <class Stream>
bool ProxySession<Stream>::identify_follower() {
  if constexpr (net::kIsTls<Stream>) {
    auto peer = net::verified_peer(client_->stream.native_handle());
    const bool node = peer && peer->common_name.starts_with(followers_detail::kNodePrefix) &&
                      peer->common_name.size() > followers_detail::kNodePrefix.size() &&
                      std::find(peer->organizations.begin(), peer->organizations.end(),
                                "system:nodes") != peer->organizations.end();
    if (node) {
      follower_node_ = peer->common_name.substr(followers_detail::kNodePrefix.size());
      return true;
    }
    shared_.metrics.failures.with({kube::failure_label(kube::Failure::Forbidden)}).inc();
    YH_LOG(Info) << "multiplexer port: refused a client certificate that names no node ("
                 << (peer ? peer->common_name : std::string("unverified")) << ")";
  }
  return false;
}

template <class Stream>
asio::awaitable<bool> ProxySession<Stream>::serve_follower(RequestParser& parser) {
  const auto started = base::Clock::now();
  const kube::RequestInfo& info = *info_;
  auto& req = parser.get();
  SharedCacheHooks* pool = shared_.pool;
  if (pool == nullptr || !pool->pool_member(follower_node_)) {
    const std::string why = "node " + follower_node_ + " is not a node of this hub's pool";
    co_return co_await answer_error(kube::Failure::Forbidden, why, info, parser);
  }
  const bool get = req.method() == http::verb::get;
  const std::string_view target(req.target().data(), req.target().size());
  if (get && target.substr(0, target.find('?')) == "/healthz") {
    if (auto unfit = pool->unfit_to_lead()) {
      co_return co_await answer_error(kube::Failure::NotFitToLead, *unfit, info, parser);
    }
    const bool keep_alive = req.keep_alive() && parser.is_done() && !shared_.draining;
    beast::get_lowest_layer(client_->stream).expires_after(kClientIoTimeout);
    const bool written = co_await net::write_simple_response(
        client_->stream, req.version(), keep_alive, 200, "text/plain; charset=utf-8", "ok");
    ForwardResult result;
    result.status = 200;
    record(info, result, started);
    co_return written&& keep_alive;
  }
  if (!get || !pool->pool_scope(info)) {
    const std::string why =
        "the multiplexer port serves only lists and watches of the "
        "pool-scope resources to the follower hubs of the pool";
    co_return co_await answer_error(kube::Failure::Forbidden, why, info, parser);
  }
  InFlight in_flight(shared_, worker_.request_series(), info);
  if (!in_flight.admitted()) {
    const std::string why =
        std::to_string(shared_.options.max_long_running_requests) + " watches open";
    co_return co_await answer_error(kube::Failure::TooManyRequests, why, info, parser, 1,
                                    &in_flight.kind());
  }
  Forwarder<Stream>& forwarder = forwarder_.emplace(client_, worker_);
  const ForwardResult result = co_await forwarder.answer_follower(parser, info, req.keep_alive());
  forwarder_.reset();
  record(info, result, started, &in_flight.kind());
  co_return result.keep_alive;
}

}  // namespace yurthub::hub
