// The pool-sharing feature assembled; see pool_sharing.h.
#include "pool/pool_sharing.h"

#include <algorithm>

#include "base/log.h"

namespace yurthub::pool {

PoolSharing::PoolSharing(PoolSharingSettings settings, base::MetricsRegistry& metrics)
    : settings_(std::move(settings)), metrics_(metrics) {
  SharedCacheOptions options;
  options.node_name = settings_.node_name;
  options.serving.min_request_timeout = settings_.min_request_timeout;
  cache_ = std::make_unique<SharedCache>(options, metrics);
  resources_ = parse_pool_resources("/v1/services,discovery.k8s.io/v1/endpointslices");
  for (const std::string& flag : settings_.extra_resources) {
    for (auto& r : parse_pool_resources(flag)) {
      if (std::find(resources_.begin(), resources_.end(), r) == resources_.end())
        resources_.push_back(std::move(r));
    }
  }
}

PoolSharing::~PoolSharing() {
  try {
    stop();
  } catch (const std::exception& e) {  // the reflectors' and leaders' stops dispatch, and may throw
    YH_LOG(Error) << "pool sharing: stopping on destruction: " << e.what();
  }
}

void PoolSharing::start(const boost::asio::any_io_executor& executor, std::string proxy_host,
                        unsigned short proxy_port, std::function<bool()> online,
                        LeaderHubWatcher::InformerFactory make_informer) {
  if (settings_.multiplexer_port != 0 && settings_.node_identity) {
    LeaderHubsSettings leader_settings;
    leader_settings.node_name = settings_.node_name;
    leader_settings.port = settings_.multiplexer_port;
    leader_settings.tls = settings_.node_identity;
    leaders_ = std::make_unique<LeaderHubs>(executor, std::move(leader_settings), metrics_,
                                            [this] { cache_->reconnect(); });
    cache_->follow([leaders = leaders_.get()] { return leaders->current(); });
  }
  cache_->persist_to(settings_.node_cache);
  cache_->start(executor, std::move(proxy_host), proxy_port, std::move(online));
  cache_->set_resources(resources_);
  watcher_ = std::make_unique<LeaderHubWatcher>(*cache_, resources_, std::move(make_informer),
                                                leaders_.get());
}

void PoolSharing::set_pool(const std::string& pool) {
  if (watcher_) watcher_->set_pool(pool);
}

// The watcher's informer and the leaders' timer belong to the hub's executors: they are destroyed
// here, while the Hub (and its io_contexts) still exist, never after it (PoolSharing outlives the
// Hub, whose connections answer from the cache). The reflectors stop asking for a source first.
void PoolSharing::stop() {
  if (watcher_) watcher_->stop();
  watcher_.reset();
  cache_->stop();
  if (leaders_) leaders_->stop();
  leaders_.reset();
}

}  // namespace yurthub::pool
