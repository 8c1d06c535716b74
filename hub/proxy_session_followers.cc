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
// (proxy_session.h), split from proxy_session.cc.
// The member templates are in hub/proxy_session_followers_impl.h; instantiated here.
#include "hub/proxy_session_followers_impl.h"

namespace yurthub::hub {
namespace asio = boost::asio;
namespace beast = boost::beast;

template bool ProxySession<net::PlainStream>::identify_follower();
template bool ProxySession<net::TlsStream>::identify_follower();
template asio::awaitable<bool> ProxySession<net::PlainStream>::serve_follower(RequestParser&);
template asio::awaitable<bool> ProxySession<net::TlsStream>::serve_follower(RequestParser&);

}  // namespace yurthub::hub
