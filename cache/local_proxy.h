// LocalProxy: answers reads from the cache when no apiserver can be reached
// (docs/offline-semantics.md has the table):
//   get       the cached object (highest resourceVersion among the component's sets), else 404;
//   list      from a complete cached list that covers the request (same namespace or all, same or
//             wider selectors), selectors evaluated locally, `limit`/`continue` honoured, list
//             resourceVersion = the highest seen; a resource never listed is 404, never an empty
//             list (an empty pod list makes kubelet kill every pod);
//   watch     200, held open until timeoutSeconds (or --min-request-timeout x [1,2)), a server
//             turning healthy, the client leaving or the hub draining; BOOKMARKs when allowed;
//             MODIFIED events for the node's own journaled writes (LocalEvents);
//   streaming list (a watch with sendInitialEvents=true; local_watch.cc) ADDED for every object
//             of the covering complete list, the BOOKMARK that ends them, then as a watch; a
//             set never listed is the list's 404 (client-go then lists, and gets it too);
//   discovery the cached document, else 404.
// Everything is written as JSON. Called by NodeCache::serve_offline on worker threads; each call
// uses its own read view.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "base/clock.h"
#include "cache/cache_metrics.h"
#include "cache/list_identity.h"
#include "cache/local_answer.h"
#include "cache/local_events.h"
#include "cache/store.h"
#include "hub/hooks/cache_hooks.h"
#include "kube/request_info.h"
#include "kube/status.h"

namespace yurthub::cache {

class LocalProxy {
 public:
  struct Options {
    std::chrono::seconds min_request_timeout{1800};
    std::chrono::seconds bookmark_interval{60};
    std::size_t write_bytes = 64 * 1024;  // a list is written in pieces of about this size
    // How long a list may be written straight from the cache's snapshot before what is left is
    // copied out and the snapshot released (LocalProxy::write_list).
    std::chrono::milliseconds snapshot_hold{1000};
  };

  LocalProxy(Store& store, CacheMetrics& metrics, LocalEvents& events, Options options);

  // `identity`: the request's ListIdentity (CachePolicy::identity), nullopt for discovery.
  // Returns the HTTP code sent, 0 if the client left before a response was sent.
  boost::asio::awaitable<unsigned> serve(const kube::RequestInfo& info,
                                         const std::optional<ListIdentity>& identity,
                                         hub::ResponseWriter& out);

 private:
  boost::asio::awaitable<unsigned> get(const kube::RequestInfo& info, const ListIdentity& identity,
                                       hub::ResponseWriter& out);
  boost::asio::awaitable<unsigned> list(const kube::RequestInfo& info, const ListIdentity& identity,
                                        hub::ResponseWriter& out);
  boost::asio::awaitable<unsigned> watch(const kube::RequestInfo& info,
                                         const ListIdentity& identity, hub::ResponseWriter& out);
  // Writes a list's `head` (then its pieces), its `items` (views into `view`'s snapshot) and its
  // end. While the client keeps up, pieces of about write_bytes are made from the snapshot in one
  // reused buffer and written: no copy of the whole list, whose fresh pages cost more than the
  // copying (19 MiB for 5000 pods; docs/benchmarks.md). A read transaction held while a slow
  // client reads would pin LMDB's pages, and the file would grow with every write meanwhile, so
  // once snapshot_hold has passed, what is left is copied out, the snapshot released, and the
  // copy written, as kube-apiserver builds a list before sending it.
  boost::asio::awaitable<unsigned> write_list(std::string& head,
                                              std::vector<std::string_view>& items,
                                              std::unique_ptr<ReadView>& view,
                                              hub::ResponseWriter& out);
  // A streaming list's ADDED events for `items` (views into `view`'s snapshot, objects of
  // `record`'s list), written as write_list writes a list, then the snapshot released. False
  // when the client left.
  boost::asio::awaitable<bool> write_initial_events(std::vector<std::string_view>& items,
                                                    const ListRecord& record,
                                                    std::unique_ptr<ReadView>& view,
                                                    hub::ResponseWriter& out);
  boost::asio::awaitable<unsigned> discovery(const kube::RequestInfo& info,
                                             hub::ResponseWriter& out);

  Store& store_;
  CacheMetrics& metrics_;
  LocalEvents& events_;
  Options options_;
};

// The cached object as the apiserver would return it from a GET: list items are stored without
// kind/apiVersion (lists omit them), so they are added from the list's record when missing.
std::string as_get_response(std::string_view json, const ListRecord& record);

// Offline continue tokens: "yh1." + base64url of {"s":set,"n":namespace,"m":name}. Any other
// token (e.g. the apiserver's, from before the link dropped) cannot be resumed: 410 Expired.
struct ContinuePoint {
  std::uint32_t set = 0;
  std::string namespace_name;
  std::string name;
};
std::string encode_continue(const ContinuePoint& point);
std::optional<ContinuePoint> decode_continue(std::string_view token);

}  // namespace yurthub::cache
