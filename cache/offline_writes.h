// OfflineWrites: the writes a node makes while no apiserver is reachable (design §5, §6;
// docs/offline-semantics.md, "Writes while offline"). Made with the hub's own credentials (as
// kubelet's are), a write is first held to what kube-apiserver lets the node's identity do
// (cache/node_authority.h): what it would refuse gets its 403 here, never a 200 that the replay
// would lose. A write with the caller's own token is first verified (cache/callers.h): one the
// apiserver never accepted on this node gets a Status, and a verified one changes only the copies
// its own owner holds, never the node's or another caller's. Then:
//   patch, update  of a cached object (any subresource-less or /status write of a cache agent):
//                  applied to every cached copy of the object and journaled, in one LMDB
//                  transaction; 200 with the updated object once that commit is durable; open
//                  offline watches get a MODIFIED event. JSON patch, merge patch and strategic
//                  merge patch are applied; anything else is refused with a Status, never faked.
//                  An update arrives as JSON, or as protobuf for the kinds kubelet sends so
//                  (its CSINode: kube/protobuf_json.h), applied and journaled as JSON.
//   leases         kubelet's lease update (JSON or protobuf) is applied locally and never
//                  journaled: a stale heartbeat means nothing upstream.
//   creates        events, and kubelet's node, CSINode, lease and token creates: OfflineCreates.
// Everything else stays a 503 (the Forwarder never calls this for it). Called by NodeCache on
// worker threads; the cache reads and writes happen in one CacheWriter task.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "cache/cache_metrics.h"
#include "cache/cache_policy.h"
#include "cache/cache_writer.h"
#include "cache/callers.h"
#include "cache/journal.h"
#include "cache/local_events.h"
#include "cache/node_authority.h"
#include "cache/offline_creates.h"
#include "cache/token_keeper.h"
#include "hub/hooks/cache_hooks.h"

namespace yurthub::cache {

class OfflineWrites {
 public:
  // `authority`: the node's identity, or null when the hub's credentials are not a node's (then
  // nothing is checked against the node's rules).
  OfflineWrites(CacheWriter& writer, Store& store, Journal& journal, LocalEvents& events,
                const CachePolicy& policy, CacheMetrics& metrics, TokenKeeper& tokens,
                Callers& callers, const NodeAuthority* authority);

  // Whether `info` is a write this unit answers while offline (see the table above).
  bool handles(const kube::RequestInfo& info) const;
  // Answers it. Returns the HTTP code sent, 0 if the client left first.
  boost::asio::awaitable<unsigned> serve(const kube::RequestInfo& info,
                                         const hub::OfflineWrite& write, hub::ResponseWriter& out);

 private:
  // `owner`: whose cached copies the write changes (cache/callers.h).
  boost::asio::awaitable<unsigned> write_object(const kube::RequestInfo& info,
                                                const hub::OfflineWrite& write, bool as_node,
                                                const std::string& owner, hub::ResponseWriter& out);

  CacheWriter& writer_;
  Journal& journal_;
  LocalEvents& events_;
  const CachePolicy& policy_;
  CacheMetrics& metrics_;
  Callers& callers_;
  const NodeAuthority* authority_;
  OfflineCreates creates_;
};

}  // namespace yurthub::cache
