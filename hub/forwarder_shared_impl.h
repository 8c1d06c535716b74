// The member templates of Forwarder (hub/forwarder.h): the shared watch cache; see there. Included
// by hub/forwarder_shared.cc, which instantiates them for the hub's two client streams, and by
// the request path's tests over in-memory streams (test/hub/proxy_session_streams_test.cc).
//
// The Forwarder's answers from the pool's shared watch cache (hub/hooks/shared_cache_hooks.h):
// a pool-scope list or watch the cache admits is answered from it, through the client's own
// filters; one it does not is forwarded as any other request. A follower hub's on the multiplexer
// port is answered unfiltered, or refused. Split from forwarder_impl.h; the same
// class (forwarder.h), instantiated for both client stream types here too.
#pragma once

#include "hub/forwarder.h"

namespace yurthub::hub {
namespace asio = boost::asio;

template <class Stream, class Pool>
asio::awaitable<ForwardResult> Forwarder<Stream, Pool>::answer_shared(RequestParser& parser,
                                                                      const kube::RequestInfo& info,
                                                                      bool keep_alive) {
  const bool admitted = co_await shared_.pool->admit(info);
  if (!admitted) co_return co_await wait_then_exchange(parser, info, keep_alive);
  if (plan_.filter && !shared_.filters->ready()) {
    auto refusal = co_await wait_for_filters();
    if (refusal) {
      co_return co_await fail(refusal->failure, refusal->detail, parser, keep_alive,
                              ForwardResult{});
    }
  }
  co_return co_await answer_locally(parser, info, keep_alive, ForwardResult{},
                                    LocalSource::SharedCache);
}

template <class Stream, class Pool>
asio::awaitable<ForwardResult> Forwarder<Stream, Pool>::answer_follower(
    RequestParser& parser, const kube::RequestInfo& info, bool keep_alive) {
  client_version_ = parser.get().version();
  const bool admitted = co_await shared_.pool->admit_follower(info);
  if (!admitted) {
    const std::string why = "its copy of " + info.resource + " cannot answer this query";
    co_return co_await fail(kube::Failure::NotFitToLead, why, parser, keep_alive, ForwardResult{});
  }
  co_return co_await answer_locally(parser, info, keep_alive, ForwardResult{},
                                    LocalSource::SharedCache);
}

}  // namespace yurthub::hub
