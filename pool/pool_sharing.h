// PoolSharing: the pool-sharing feature assembled for cmd/yurthub.cc: the node's SharedCache
// (pool/shared_cache.h), the follower's LeaderHubs (pool/leader_hubs.h) and the LeaderHubWatcher
// that applies ConfigMap leader-hub-<pool> to both (pool/leader_hub_config.h). The Hub answers
// from cache() and, as a leader, serves it on the multiplexer port.
//
// Threading: start, set_pool and stop run on the hub's first worker (the executor given).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/metrics.h"
#include "net/tls.h"
#include "pool/leader_hub_config.h"
#include "pool/leader_hubs.h"
#include "pool/shared_cache.h"

namespace yurthub::pool {

struct PoolSharingSettings {
  std::string node_name;
  std::chrono::seconds min_request_timeout{1800};
  std::vector<std::string> extra_resources;  // --pool-scope-resources
  // --multiplexer-port, where leaders are reached; 0: this hub never follows a leader.
  unsigned short multiplexer_port = 10269;
  std::shared_ptr<net::ReplaceableContext> node_identity;  // presented to leaders
  hub::CacheHooks* node_cache = nullptr;  // keeps what a leader feeds (null: nothing is kept)
};

class PoolSharing {
 public:
  PoolSharing(PoolSharingSettings settings, base::MetricsRegistry& metrics);
  ~PoolSharing();

  SharedCache& cache() { return *cache_; }
  // Starts the shared list+watches through the hub's plain proxy port, and the leader-hub
  // ConfigMap's informer once the pool is known. `online`: whether an apiserver is healthy.
  void start(const boost::asio::any_io_executor& executor, std::string proxy_host,
             unsigned short proxy_port, std::function<bool()> online,
             LeaderHubWatcher::InformerFactory make_informer);
  // This node's pool ("" = none), as the filters learn it.
  void set_pool(const std::string& pool);
  // Stops sharing and destroys what runs on the hub's executors. REQUIRES: called before the
  // Hub is destroyed (after Hub::run), on its first worker's thread or once it has stopped.
  void stop();

 private:
  PoolSharingSettings settings_;
  base::MetricsRegistry& metrics_;
  std::vector<PoolResource> resources_;  // the set without a ConfigMap
  std::unique_ptr<SharedCache> cache_;
  std::unique_ptr<LeaderHubs> leaders_;
  std::unique_ptr<LeaderHubWatcher> watcher_;
};

}  // namespace yurthub::pool
