// The hub process's parts, assembled, started and stopped; see node_hub.h.
#include "cmd/node_hub.h"

#include "base/log.h"
#include "hub/node_ip.h"
#include "hub/version.h"

namespace yurthub::cmd {

NodeHub::~NodeHub() = default;

Result<std::unique_ptr<NodeHub>> NodeHub::assemble(hub::HubOptions options) {
  std::unique_ptr<NodeHub> node(new NodeHub);
  auto identity = load_credentials(options, node->registry_);
  if (!identity) return identity.error();
  node->identity_ = std::move(*identity);
  // After the credentials (a bad kubeconfig's exit 2 is one line on stderr), before the serving
  // certificate, which names it.
  hub::default_node_ip(options);
  auto serving = make_serving_tls(options, node->identity_, node->registry_);
  if (!serving) return serving.error();
  node->serving_ = std::move(*serving);

  YH_LOG(Info) << "yurthub " << hub::kVersion << " starting for node " << options.node_name;
  if (auto warning = hub::unsafe_directory_warning(options.root_dir)) {
    YH_LOG(Warning) << "root dir: " << *warning;
  }
  node->node_cache_ = open_edge_cache(options, node->registry_, node->cache_error_);
  node->filters_ = std::make_unique<filters::FilterManager>(
      filter_settings(options, node->serving_.context != nullptr), node->registry_);
  node->node_name_ = options.node_name;
  node->edge_ = options.working_mode == hub::WorkingMode::Edge;
  node->cloud_tls_ = node->identity_.upstream_tls;
  node->pool_sharing_ = make_pool_sharing(options, node->identity_.hub_identity,
                                          node->node_cache_.get(), node->registry_);
  node->hub_ = std::make_unique<hub::Hub>(
      std::move(options), std::move(node->identity_.upstream_tls),
      std::move(node->serving_.context), node->registry_, node->node_cache_.get());
  node->connect_parts();
  return node;
}

void NodeHub::connect_parts() {
  hub::Hub& hub = *hub_;
  filters::FilterManager& filters = *filters_;
  if (auto* certificates = identity_.certificates.get()) {
    hub.on_join_token([certificates](const std::string& token) {
      return certificates->update_join_token(token);
    });
  }
  ota_ = add_ota_routes(hub, node_name_, node_cache_.get(), registry_);
  hub.set_filters(&filters, [&filters] { return filters.not_ready_reason(); });
  if (pool_sharing_) connect_pool(hub, *pool_sharing_, filters, identity_.credentials.ca_pem);
  if (auto* serving = serving_.manager.get()) {
    hub.add_readiness_check([serving] { return serving->pending_reason(); });
  }
  hub.on_config(
      [&filters](const std::map<std::string, std::string>& data) { filters.set_config(data); });
  if (node_cache_) follow_cache_agents(hub, node_cache_->policy());
}

Status NodeHub::start() {
  hub::Hub& hub = *hub_;
  if (auto started = hub.start(); !started) return started;
  keep_identity_fresh(identity_.certificates.get(), identity_.reloader.get(),
                      serving_.manager.get(), identity_.hub_identity);
  // Upstream keeps the condition only in edge mode (its autonomy proxy): none in cloud mode.
  if (edge_) {
    autonomy_ =
        start_autonomy(hub, node_name_, cloud_tls_, node_cache_.get(), cache_error_, registry_);
  }
  filters_->set_hub_port(hub.secure_port());
  auto make_informer = [&hub](net::InformerOptions o, net::Informer::OnChange on_change) {
    return hub.make_informer(std::move(o), std::move(on_change));
  };
  if (pool_sharing_) start_pool(hub, *pool_sharing_, *filters_, make_informer);
  filters_->start(make_informer, [&hub] { hub.notify_filters_changed(); });
  return {};
}

int NodeHub::run() {
  const int code = hub_->run();
  if (autonomy_) autonomy_->stop();
  if (identity_.certificates) identity_.certificates->stop();
  // The reloader's thread renews the serving certificate: stopped before that goes.
  identity_.reloader.reset();
  filters_->stop();
  if (pool_sharing_) pool_sharing_->stop();
  if (node_cache_) node_cache_->stop_replay();  // before the Hub and its executors go
  return code;
}

}  // namespace yurthub::cmd
