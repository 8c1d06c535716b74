// Lists and watches answered from a WatchCache as the apiserver answers them from its own watch
// cache: the request's namespace, label and field selectors (a selector the apiserver refuses
// gets its 400), `limit` and `continue` over a kept snapshot, `timeoutSeconds`,
// `allowWatchBookmarks`; a watch from a resourceVersion older than the cache's window gets the
// apiserver's 410 ERROR event. A watch with selectors sees an object that starts or stops
// matching as ADDED or DELETED. Written as JSON through the hub's ResponseWriter (with the
// envelope, Status and bookmark pieces shared with the offline LocalProxy, cache/local_answer.h).
// Called by SharedCache::serve on worker threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "hub/hooks/cache_hooks.h"
#include "kube/request_info.h"
#include "pool/watch_cache.h"

namespace yurthub::pool {

struct ServingOptions {
  std::chrono::seconds min_request_timeout{1800};
  std::chrono::seconds bookmark_interval{60};
  std::size_t write_bytes = 64 * 1024;  // a list is written in pieces of about this size
};

// The snapshots a paged list's continue tokens point into: the last few, for a minute.
class PagedSnapshots {
 public:
  void keep(const std::shared_ptr<const CacheSnapshot>& snapshot);
  std::shared_ptr<const CacheSnapshot> find(std::uint64_t resource_version);

 private:
  struct Kept {
    std::shared_ptr<const CacheSnapshot> snapshot;
    std::chrono::steady_clock::time_point until;
  };
  std::mutex mutex_;
  std::deque<Kept> kept_;
};

// Continue tokens of the shared cache: "yp1." + base64url of {"rv":N,"k":"<last key>"}.
std::string encode_pool_continue(std::uint64_t resource_version, const std::string& last_key);
struct PoolContinue {
  std::uint64_t resource_version = 0;
  std::string last_key;
};
std::optional<PoolContinue> decode_pool_continue(std::string_view token);
inline bool is_pool_continue(std::string_view token) { return token.starts_with("yp1."); }

boost::asio::awaitable<unsigned> serve_list(WatchCache& cache, PagedSnapshots& pages,
                                            const kube::RequestInfo& info,
                                            const ServingOptions& options,
                                            hub::ResponseWriter& out);

boost::asio::awaitable<unsigned> serve_watch(WatchCache& cache, const kube::RequestInfo& info,
                                             const ServingOptions& options,
                                             hub::ResponseWriter& out);

}  // namespace yurthub::pool
