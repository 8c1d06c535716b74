// The hub's extension point for the pool's shared watch cache (pool/ implements it; the hub knows
// nothing of watch caches, and the pool knows nothing of streams and sockets): a list or watch of
// a pool-scope resource (Services, EndpointSlices) is answered from the node's one copy of it,
// with the client's own filters applied on the way out, instead of holding an upstream
// list/watch per client (docs/pool-sharing.md).
//
// Threading: called from every worker thread; must be thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>

#include "hub/hooks/cache_hooks.h"
#include "kube/request_info.h"

namespace yurthub::hub {

class SharedCacheHooks {
 public:
  virtual ~SharedCacheHooks() = default;
  // Whether the request is a list or watch of a pool-scope resource from a client other than the
  // shared cache's own upstream requests. Cheap; asked of every request.
  virtual bool pool_scope(const kube::RequestInfo& info) const = 0;
  // Whether the shared cache answers this pool-scope request: its copy is synced, the query is
  // one it answers as the apiserver would, and the caller may read it (the node's own callers;
  // a bearer token only once the apiserver has let it list the same resource). False: the
  // request is forwarded as any other.
  virtual boost::asio::awaitable<bool> admit(const kube::RequestInfo& info) = 0;
  // Answers an admitted request. Returns the HTTP code sent, 0 if the client left first.
  virtual boost::asio::awaitable<unsigned> serve(const kube::RequestInfo& info,
                                                 ResponseWriter& writer) = 0;

  // The multiplexer port (--multiplexer-port), where this hub feeds the follower hubs of its pool
  // over mutual TLS. Whether `node`, the verified client certificate's system:node:<node>, is a
  // node of this hub's pool (false while the pool is not known).
  virtual bool pool_member(std::string_view node) const = 0;
  // Why this hub cannot feed followers now (it has lost the cloud, its copies are not synced);
  // nullopt when it can. Followers ask it before they trust this hub, and again every second.
  virtual std::optional<std::string> unfit_to_lead() const = 0;
  // Whether a follower's pool-scope list or watch is answered from the shared cache, unfiltered:
  // it is synced (waiting for the first list as admit() does) and the query one it answers as the
  // apiserver would.
  virtual boost::asio::awaitable<bool> admit_follower(const kube::RequestInfo& info) = 0;
};

}  // namespace yurthub::hub
