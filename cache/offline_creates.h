// OfflineCreates: the creates the node makes while no apiserver is reachable, answered as kubelet
// needs them to restart its node and pods (docs/offline-semantics.md, "kubelet's restart
// sequence"), JSON or protobuf bodies alike:
//   events        journaled up to the journal's event bound (the oldest is dropped), replayed
//                 as sent; the answer is the event as the client sent it;
//   nodes         409 AlreadyExists when the node has the object cached: kubelet's registration
//                 then gets and patches it, as against the cloud; else a 503;
//   leases,       409 AlreadyExists when cached; else kept locally (never journaled: a stale
//   csinodes      heartbeat means nothing upstream, and a node that ever registered has its
//                 CSINode in the cloud already) and 201. Without its CSINode kubelet exits
//                 (csi_plugin.go's initializeCSINode), so a cache that lacks it (a hub upgraded
//                 from a version that kept no write answers) must not stop the node;
//   tokens        a TokenRequest for a pod the node has cached and runs: the token kept from
//                 the apiserver, else a fake short-lived one (cache/token_keeper.h).
// Everything else is a 503. OfflineWrites checks the node's authority before calling this;
// `as_node` says whether the hub's own credentials are in use (the special answers are for the
// node's identity; a caller with its own token gets the 503). Runs on worker threads; the cache
// is read and written in CacheWriter tasks.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "cache/cache_metrics.h"
#include "cache/cache_policy.h"
#include "cache/cache_writer.h"
#include "cache/journal.h"
#include "cache/node_authority.h"
#include "cache/token_keeper.h"
#include "hub/hooks/cache_hooks.h"

namespace yurthub::cache {

class OfflineCreates {
 public:
  // A kind the node keeps locally when created offline and not cached.
  struct LocalKind {
    std::string_view kind, api_version, list_kind;
  };

  OfflineCreates(CacheWriter& writer, Store& store, Journal& journal, TokenKeeper& tokens,
                 const NodeAuthority* authority);

  // Answers a create (authorized already). Returns the HTTP code sent, 0 if the client left.
  boost::asio::awaitable<unsigned> serve(const kube::RequestInfo& info,
                                         const hub::OfflineWrite& write, bool as_node,
                                         hub::ResponseWriter& out);

 private:
  boost::asio::awaitable<unsigned> create_event(const kube::RequestInfo& info,
                                                const hub::OfflineWrite& write,
                                                hub::ResponseWriter& out);
  // A lease or CSINode (`kind`) kept locally; 409 when cached.
  boost::asio::awaitable<unsigned> create_locally(const kube::RequestInfo& info,
                                                  const LocalKind& kind,
                                                  const hub::OfflineWrite& write,
                                                  hub::ResponseWriter& out);
  boost::asio::awaitable<unsigned> request_token(const kube::RequestInfo& info,
                                                 const hub::OfflineWrite& write,
                                                 hub::ResponseWriter& out);
  // 409 when the named object is cached, else a 503 saying why it cannot be created.
  boost::asio::awaitable<unsigned> exists_or_offline(const kube::RequestInfo& info,
                                                     const std::string& name,
                                                     hub::ResponseWriter& out);

  CacheWriter& writer_;
  Store& store_;
  Journal& journal_;
  TokenKeeper& tokens_;
  const NodeAuthority* authority_;
};

// The name of the object a create's body carries (JSON or protobuf); "" when unreadable.
std::string created_object_name(std::string_view content_type, std::string_view body);

// The journal entry of an offline write of object `name` (its body as given), made now.
JournalEntry journal_entry_for(const kube::RequestInfo& info, const hub::OfflineWrite& write,
                               std::string body, std::string_view name);

}  // namespace yurthub::cache
