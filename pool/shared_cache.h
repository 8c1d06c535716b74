// SharedCache: the node's one list+watch per pool-scope resource (YurtHub's multiplexer), and
// the hub's SharedCacheHooks over it. For each resource of the set (--pool-scope-resources,
// replaced at run time by the `pool-scoped-metadata` key of ConfigMap leader-hub-<pool>) a
// net::Reflector lists and watches through the hub's own proxy port with User-Agent
// `multiplexer-proxy-<node>`, as YurtHub's does: so its requests go where the hub sends any
// request (the cloud; the node cache when offline, where they are cached like a cache agent's and
// survive a restart), and feed a WatchCache. Every local list and watch of the resource is then
// answered from that cache (pool/shared_serving.h), through the client's own filters.
//
// Admission (admit): the cache is synced; the query is one the cache answers as the apiserver
// would (options the apiserver takes, a streaming list at a version the cache has reached, no
// sendInitialEvents=false, no resourceVersionMatch=Exact, no resourceVersion newer than the
// cache, no apiserver continue token, a client that accepts JSON); and the caller may read it:
// the node's own callers (no token) are served as the node, whose identity the hub lends them
// anyway; a caller with a bearer token once the apiserver said (a SelfSubjectAccessReview with
// that token, pool/access_reviews.h) it may list or watch the resource there, else forwarded
// so the apiserver authorizes it (docs/pool-sharing.md).
//
// Threading: the reflectors run on the executor given (worker 0); pool_scope/admit/serve are
// called from every worker; set_resources from worker 0.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "base/metrics.h"
#include "hub/hooks/shared_cache_hooks.h"
#include "net/reflector.h"
#include "pool/access_reviews.h"
#include "pool/shared_serving.h"
#include "pool/watch_cache.h"

namespace yurthub::pool {

// A pool-scope resource, as `group/version/resource` ("" group: the core API, "/v1/services").
struct PoolResource {
  std::string group, version, resource;
  std::string text() const { return group + "/" + version + "/" + resource; }
  std::string path() const {
    return group.empty() ? "/api/" + version + "/" + resource
                         : "/apis/" + group + "/" + version + "/" + resource;
  }
  bool operator<(const PoolResource& o) const { return text() < o.text(); }
  bool operator==(const PoolResource& o) const = default;
};

// Parses a comma list of `group/version/resource` (the flag's and the ConfigMap's syntax);
// malformed entries are skipped and named in *bad.
std::vector<PoolResource> parse_pool_resources(std::string_view text, std::string* bad = nullptr);

struct SharedCacheOptions {
  std::string node_name;
  ServingOptions serving;
  WatchCache::Options cache;  // its name is set per resource
  std::chrono::seconds watch_timeout_min{300};
  // How long a request waits for the first list before it is forwarded instead.
  std::chrono::milliseconds sync_wait{5000};
};

class SharedCache final : public hub::SharedCacheHooks {
 public:
  SharedCache(SharedCacheOptions options, base::MetricsRegistry& metrics);
  ~SharedCache() override;

  // Lists and watches from now on, on `executor` (worker 0), through the hub's plain proxy port
  // at host:port. REQUIRES: called once, before set_resources().
  // `online`: whether an apiserver is healthy (the source the hub's answers come from).
  void start(boost::asio::any_io_executor executor, std::string proxy_host,
             unsigned short proxy_port, std::function<bool()> online);

  // The resources shared from now on: new ones start their list+watch, removed ones stop it
  // (their open client watches end; the clients re-watch through the apiserver).
  void set_resources(const std::vector<PoolResource>& resources);
  void stop();  // every reflector; lists and watches are forwarded from now on
  // A follower's source (pool/leader_hubs.h): asked before each request of every reflector; a
  // leader's address, or nullopt for the hub's own port (the cloud). REQUIRES: before
  // set_resources(), on the reflectors' executor.
  void follow(std::function<std::optional<net::SourceAddress>()> leader) {
    leader_ = std::move(leader);
  }
  // The node cache, which keeps what a leader feeds (a follower's lists and watches do not pass
  // through the hub), so that an offline restart lists from disk as after the cloud's. Null: not
  // kept. REQUIRES: before set_resources().
  void persist_to(hub::CacheHooks* node_cache) { persist_ = node_cache; }
  // The source changed: every reflector drops its connection and resumes at the new one.
  void reconnect();
  // Which nodes are of this hub's pool (the filters' view of the NodePool); nobody until set.
  void set_pool_membership(std::function<bool(std::string_view)> member) {
    pool_member_ = std::move(member);
  }
  std::string user_agent() const { return "multiplexer-proxy-" + options_.node_name; }
  // The cache of one resource, if it is shared (tests and metrics).
  std::shared_ptr<WatchCache> cache_of(const PoolResource& resource) const;

  bool pool_scope(const kube::RequestInfo& info) const override;
  boost::asio::awaitable<bool> admit(const kube::RequestInfo& info) override;
  boost::asio::awaitable<unsigned> serve(const kube::RequestInfo& info,
                                         hub::ResponseWriter& writer) override;
  bool pool_member(std::string_view node) const override;
  std::optional<std::string> unfit_to_lead() const override;
  boost::asio::awaitable<bool> admit_follower(const kube::RequestInfo& info) override;

 private:
  class MeteredSink;  // the WatchCache as the reflector's sink, with the source and fan-out metrics
  struct Entry {
    PoolResource resource;
    std::shared_ptr<WatchCache> cache;
    std::unique_ptr<net::Reflector> reflector;
    std::shared_ptr<PagedSnapshots> pages = std::make_shared<PagedSnapshots>();
  };
  using Entries = std::map<std::string, std::shared_ptr<Entry>>;  // by resource text

  std::shared_ptr<Entry> find(const kube::RequestInfo& info) const;
  // A node-cache tap for the reflectors' GET of `target` as the hub would make it, or null.
  std::unique_ptr<hub::ResponseTap> node_cache_tap(const std::string& target) const;
  // Waits (at most sync_wait) for the entry's first list, unless it was tried and failed.
  boost::asio::awaitable<void> wait_for_first_list(const Entry& entry) const;
  // Whether the cache answers this query as the apiserver would.
  static bool answerable(const kube::RequestInfo& info, const WatchCache& cache);

  boost::asio::any_io_executor executor_;
  std::string proxy_host_;
  unsigned short proxy_port_ = 0;
  SharedCacheOptions options_;
  std::string own_component_;  // the reflectors' User-Agent, lowercased
  AccessReviews reviews_;      // bearer-token callers' clearance
  std::atomic<std::shared_ptr<const Entries>> entries_;
  base::GaugeFamily& in_flight_;     // node_yurthub_aggregated_in_flight_requests_collector
  base::Gauge& in_flight_total_;     // node_yurthub_aggregated_in_flight_requests_total
  base::CounterFamily& answers_;     // node_yurthub_pool_answers_total{resource,verb,answer}
  base::GaugeFamily& targets_;       // node_yurthub_target_for_multiplexer_requests_collector
  base::CounterFamily& fanned_out_;  // node_yurthub_pool_events_fanned_out_total{resource}
  std::function<bool()> online_;
  std::function<std::optional<net::SourceAddress>()> leader_;
  std::function<bool(std::string_view)> pool_member_;
  hub::CacheHooks* persist_ = nullptr;
  std::atomic<int> fed_by_leader_{0};  // reflectors whose last request went to a leader
};

}  // namespace yurthub::pool
