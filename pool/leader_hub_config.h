// The ConfigMap yurt-manager's hubleaderconfig controller writes for each NodePool,
// kube-system/leader-hub-<pool> (label openyurt.io/configmap-name), read by every hub of the pool:
//   pool-scoped-metadata   "group/version/resource,..." the resources shared (replaces
//                          --pool-scope-resources while the ConfigMap exists)
//   leaders                "<node>/<ip>,..." the pool's leader hubs
//   enable-leader-election "true" | "false"
//   interconnectivity      "true" | "false"
// LeaderHubWatcher follows this node's pool (as the filters learn it) and that pool's ConfigMap,
// applies its resource set to the SharedCache, and hands the leaders a follower uses to
// LeaderHubs (pool/leader_hubs.h; docs/pool-sharing.md).
// Runs on worker 0 (the informer's executor and the filters' callback).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/informer.h"
#include "pool/leader_hubs.h"
#include "pool/shared_cache.h"

namespace yurthub::pool {

struct LeaderHubConfig {
  std::optional<std::vector<PoolResource>> resources;  // pool-scoped-metadata, when present
  std::vector<LeaderHub> leaders;
  bool leader_election = false;
  bool interconnectivity = false;
};

// Reads the ConfigMap's data (an object of strings); malformed entries are skipped.
LeaderHubConfig parse_leader_hub_config(const rapidjson::Value& configmap);

class LeaderHubWatcher {
 public:
  using InformerFactory = std::function<std::unique_ptr<net::Informer>(
      net::InformerOptions options, net::Informer::OnChange on_change)>;

  // `defaults`: the set without a ConfigMap (the flag's). `leaders`: told the leaders to follow
  // (null: this hub always feeds from the cloud).
  LeaderHubWatcher(SharedCache& cache, std::vector<PoolResource> defaults,
                   InformerFactory make_informer, LeaderHubs* leaders = nullptr,
                   std::string namespace_name = "kube-system");
  // This node's pool is `pool` ("" = none): follows its ConfigMap from now on.
  void set_pool(const std::string& pool);
  void stop();

 private:
  void on_config(const net::ObjectSnapshot& snapshot);

  SharedCache& cache_;
  std::vector<PoolResource> defaults_;
  InformerFactory make_informer_;
  LeaderHubs* leaders_;
  std::string namespace_name_;
  std::string pool_;
  std::unique_ptr<net::Informer> informer_;
  std::string last_leaders_;
};

}  // namespace yurthub::pool
