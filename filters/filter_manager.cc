// Informers, snapshots and per-response chains; see filter_manager.h.
#include "filters/filter_manager.h"

#include <algorithm>

#include "base/log.h"
#include "filters/filter_chain.h"

namespace yurthub::filters {

FilterManager::FilterManager(FilterManagerSettings settings, base::MetricsRegistry& registry)
    : settings_(std::move(settings)), metrics_(registry) {
  assignment_.store(
      std::make_shared<const FilterAssignment>(FilterAssignment::build(settings_.flags, {})));
  view_.store(std::make_shared<const ClusterView>(build_cluster_view(settings_inputs())));
  last_config_description_ = assignment_.load()->describe();
}

FilterManager::~FilterManager() { stop(); }

ViewInputs FilterManager::settings_inputs() const {
  ViewInputs in;
  in.node_name = settings_.node_name;
  in.nodepool_flag = settings_.nodepool_name;
  in.hub_host = settings_.hub_host;
  in.hub_port = settings_.hub_port;
  return in;
}

void FilterManager::set_config(const std::map<std::string, std::string>& data) {
  auto next =
      std::make_shared<const FilterAssignment>(FilterAssignment::build(settings_.flags, data));
  const std::string description = next->describe();
  assignment_.store(std::move(next));
  if (description != last_config_description_) {
    YH_LOG(Info) << "filters: " << description;
    last_config_description_ = description;
  }
}

void FilterManager::start(const InformerFactory& make_informer,
                          std::function<void()> on_topology_change) {
  YH_LOG(Info) << "filters: " << last_config_description_;
  if (last_config_description_ == "none") {
    ready_ = true;  // nothing to filter, nothing to wait for
    return;
  }
  make_informer_ = make_informer;
  on_topology_change_ = std::move(on_topology_change);
  auto changed = [this](const net::ObjectSnapshot&) { rebuild_view(); };
  net::InformerOptions node;
  node.name = "node";
  node.path = "/api/v1/nodes";
  node.field_selector = "metadata.name=" + settings_.node_name;
  node_ = make_informer_(node, changed);
  net::InformerOptions pools;
  pools.name = "nodepools";
  pools.path = "/apis/apps.openyurt.io/v1beta2/nodepools";
  pools.missing_is_empty = true;  // a cluster without OpenYurt's CRDs has no pools
  pools_ = make_informer_(pools, changed);
  net::InformerOptions services;
  services.name = "services";
  services.path = "/api/v1/services";
  services_ = make_informer_(services, changed);
  for (auto* i : {node_.get(), pools_.get(), services_.get()}) i->start();
}

void FilterManager::stop() {
  // Destroying an Informer stops it; this must happen while the hub's workers still exist.
  node_.reset();
  pools_.reset();
  pools_v1beta1_.reset();
  services_.reset();
}

void FilterManager::set_hub_port(unsigned short port) {
  settings_.hub_port = port;
  auto view = std::make_shared<ClusterView>(*view_.load());
  view->hub_port = port;
  view_.store(std::move(view));
}

void FilterManager::rebuild_view() {
  if (pools_ && pools_->missing() && !pools_v1beta1_ && make_informer_) {
    net::InformerOptions o;
    o.name = "nodepools-v1beta1";
    o.path = "/apis/apps.openyurt.io/v1beta1/nodepools";
    o.missing_is_empty = true;
    pools_v1beta1_ = make_informer_(o, [this](const net::ObjectSnapshot&) { rebuild_view(); });
    pools_v1beta1_->start();
  }
  const bool use_v1beta1 = pools_->missing() && pools_v1beta1_;
  net::Informer& pools = use_v1beta1 ? *pools_v1beta1_ : *pools_;
  ViewInputs in = settings_inputs();
  in.node = node_->snapshot();
  in.pools = pools.snapshot();
  in.services = services_->snapshot();
  in.node_synced = node_->synced();
  in.pools_synced =
      pools_->synced() && (!pools_->missing() || (pools_v1beta1_ && pools_v1beta1_->synced()));
  in.services_synced = services_->synced();
  auto next = std::make_shared<const ClusterView>(build_cluster_view(in));
  auto previous = view_.exchange(next);
  const bool was_ready = ready_.exchange(in.node_synced && in.pools_synced && in.services_synced);
  if (previous->pool_name != next->pool_name || previous->pool_nodes != next->pool_nodes) {
    YH_LOG(Info) << "filters: node " << next->node_name << " is in pool \"" << next->pool_name
                 << "\" of " << next->pool_nodes.size() << " nodes"
                 << (next->pool_known || next->pool_name.empty() ? "" : " (NodePool not found)");
  }
  if (!was_ready && ready_) YH_LOG(Info) << "filters: ready";
  if (previous->pool_name != next->pool_name && on_pool_change_) on_pool_change_(next->pool_name);
  if (was_ready && topology_changed(*previous, *next) && on_topology_change_) on_topology_change_();
}

std::optional<std::string> FilterManager::not_ready_reason() const {
  if (ready_) return std::nullopt;
  const auto view = view_.load();
  std::string missing;
  if (!view->node_synced) missing += " node " + settings_.node_name;
  if (!view->pools_synced) missing += " nodepools";
  if (!view->services_synced) missing += " services";
  return "filters waiting for the first list of:" + missing;
}

std::vector<const ObjectFilter*> FilterManager::chain_for(const kube::RequestInfo& info) const {
  if (!info.is_resource_request || !info.subresource.empty()) return {};
  // Tables and metadata-only objects are not the objects filters read.
  if (info.accept.find("as=") != std::string::npos) return {};
  return assignment_.load()->for_request(info);
}

std::unique_ptr<hub::ResponseFilter> FilterManager::filter(const kube::RequestInfo& info) {
  auto chain = chain_for(info);
  if (chain.empty()) return nullptr;
  FilterChain::Shape shape = FilterChain::Shape::Object;
  if (info.verb == kube::Verb::List)
    shape = FilterChain::Shape::List;
  else if (info.verb == kube::Verb::Watch)
    shape = FilterChain::Shape::Watch;
  else if (info.verb != kube::Verb::Get)
    return nullptr;
  // What the client holds of a reactive resource, across its list and its watches.
  std::shared_ptr<ClientView> client_view;
  const bool reactive =
      std::any_of(chain.begin(), chain.end(), [](auto* f) { return f->reactive(); });
  if (reactive && shape != FilterChain::Shape::Object) {
    client_view = client_views_.get(info.component + "\n" + info.path + "\n" + info.label_selector +
                                    "\n" + info.field_selector);
  }
  return std::make_unique<FilterChain>(
      shape, std::move(chain), [this] { return view_.load(); }, metrics_, std::move(client_view),
      info.continue_token.empty());
}

}  // namespace yurthub::filters
