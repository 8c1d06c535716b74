// NodeHub: the hub process as cmd/yurthub.cc runs it, every part it is assembled from (the
// credentials, the serving certificate, the node cache, the filters, the pool's shared cache, the
// OTA endpoints, the Autonomy condition, the Hub) held as members whose order is their lifetimes:
// each is built after what it uses and destroyed before it. The parts are made by the functions
// of cmd/yurthub_parts.h. Called only by cmd/yurthub.cc's main.
#pragma once

#include <memory>
#include <string>

#include "base/metrics.h"
#include "base/result.h"
#include "cmd/yurthub_parts.h"
#include "hub/options.h"

namespace yurthub::cmd {

class NodeHub {
 public:
  // Builds every part from the flags and ties them to the Hub. An error is a bad kubeconfig,
  // certificate or token (exit status 2); a cache that cannot open is not one (the hub serves
  // online without it).
  static Result<std::unique_ptr<NodeHub>> assemble(hub::HubOptions options);
  // Binds the ports (an error: exit status 1), then starts what runs beside them: the identity's
  // upkeep, the Autonomy condition, the pool's shared cache and the filters' informers.
  Status start();
  // Serves until SIGTERM or SIGINT and the drain, then stops the parts that run threads, in the
  // order each depends on the next. Returns the exit status.
  int run();

  ~NodeHub();
  NodeHub(const NodeHub&) = delete;
  NodeHub& operator=(const NodeHub&) = delete;

 private:
  NodeHub() = default;
  void connect_parts();  // the Hub's ties to the others, before hub_->start()

  base::MetricsRegistry registry_;
  HubCredentials identity_;
  ServingTls serving_;  // its context moved into the Hub; the manager stays here
  std::string cache_error_;
  std::unique_ptr<cache::NodeCache> node_cache_;  // edge mode, when it opened
  std::unique_ptr<filters::FilterManager> filters_;
  std::unique_ptr<ota::OtaHandler> ota_;  // outlives the admin port's connections
  std::string node_name_;
  bool edge_ = false;
  net::UpstreamTls cloud_tls_;  // the Autonomy keeper's, sharing the hub's renewed identity
  // Before the Hub: its loop's frame may outlive hub_->run() until the Hub's executors go.
  std::unique_ptr<cache::AutonomyKeeper> autonomy_;
  std::unique_ptr<pool::PoolSharing> pool_sharing_;  // the Hub's connections answer from it
  std::unique_ptr<hub::Hub> hub_;
};

}  // namespace yurthub::cmd
