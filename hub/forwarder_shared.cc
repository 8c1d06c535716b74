// The Forwarder's answers from the pool's shared watch cache (hub/hooks/shared_cache_hooks.h):
// a pool-scope list or watch the cache admits is answered from it, through the client's own
// filters; one it does not is forwarded as any other request. A follower hub's on the multiplexer
// port is answered unfiltered, or refused. Split from forwarder.cc; the same
// class (forwarder.h), instantiated for both client stream types here too.
// The member templates are in hub/forwarder_shared_impl.h; instantiated here.
#include "hub/forwarder_shared_impl.h"

namespace yurthub::hub {
namespace asio = boost::asio;

template asio::awaitable<ForwardResult> Forwarder<net::PlainStream>::answer_shared(
    RequestParser&, const kube::RequestInfo&, bool);
template asio::awaitable<ForwardResult> Forwarder<net::TlsStream>::answer_shared(
    RequestParser&, const kube::RequestInfo&, bool);
template asio::awaitable<ForwardResult> Forwarder<net::PlainStream>::answer_follower(
    RequestParser&, const kube::RequestInfo&, bool);
template asio::awaitable<ForwardResult> Forwarder<net::TlsStream>::answer_follower(
    RequestParser&, const kube::RequestInfo&, bool);

}  // namespace yurthub::hub
