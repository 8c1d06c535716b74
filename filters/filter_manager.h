// FilterManager: the hub's FilterHooks. Keeps the hub's own informers for what the filters read
// (this node, NodePools, Services), publishes them as an immutable ClusterView, keeps the
// component -> filters assignment from the flags and `yurt-hub-cfg`, and builds a FilterChain for
// each filtered response. When a Service's topology annotation or this node's pool changes, it
// calls `on_topology_change` so the hub can have open watches corrected.
//
// Created by cmd/yurthub.cc; set_config(), start() and stop() run on the hub's first worker
// thread (where the informers run); the FilterHooks methods are called from any worker.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/metrics.h"
#include "filters/client_view.h"
#include "filters/cluster_view.h"
#include "filters/filter_config.h"
#include "filters/filter_metrics.h"
#include "hub/hooks/filter_hooks.h"
#include "net/informer.h"

namespace yurthub::filters {

struct FilterManagerSettings {
  FilterFlags flags;
  std::string node_name;      // --node-name
  std::string nodepool_name;  // --nodepool-name
  std::string hub_host;       // where in-cluster clients reach the hub; "" = unknown
  unsigned short hub_port = 10268;
};

class FilterManager final : public hub::FilterHooks {
 public:
  // Makes an informer that lists and watches through the hub's own proxy port.
  using InformerFactory = std::function<std::unique_ptr<net::Informer>(
      net::InformerOptions options, net::Informer::OnChange on_change)>;

  FilterManager(FilterManagerSettings settings, base::MetricsRegistry& registry);
  ~FilterManager() override;

  // The data of yurt-hub-cfg, each time it changes.
  void set_config(const std::map<std::string, std::string>& data);
  // The HTTPS proxy port as bound (when --proxy-secure-port=0 picked one). Before start().
  void set_hub_port(unsigned short port);
  // Called on worker 0 with this node's pool name whenever it changes (the pool's leader-hub
  // ConfigMap follows it). Before start().
  void on_pool_change(std::function<void(const std::string&)> callback) {
    on_pool_change_ = std::move(callback);
  }
  // Starts the informers (none when every filter is disabled).
  void start(const InformerFactory& make_informer, std::function<void()> on_topology_change);
  // Stops and destroys the informers. REQUIRES: before the Hub (its workers) is destroyed.
  void stop();
  // Why filtered requests must wait, or nullopt when the filters are ready.
  std::optional<std::string> not_ready_reason() const;
  std::shared_ptr<const ClusterView> view() const { return view_.load(); }
  FilterMetrics& metrics() { return metrics_; }

  bool ready() const override { return ready_.load(); }
  std::unique_ptr<hub::ResponseFilter> filter(const kube::RequestInfo& info) override;

 private:
  std::vector<const ObjectFilter*> chain_for(const kube::RequestInfo& info) const;
  void rebuild_view();
  // The ViewInputs that come from the flags (no informer snapshots yet).
  ViewInputs settings_inputs() const;

  FilterManagerSettings settings_;
  FilterMetrics metrics_;
  ClientViews client_views_;
  std::atomic<std::shared_ptr<const FilterAssignment>> assignment_;
  std::atomic<std::shared_ptr<const ClusterView>> view_;
  std::atomic<bool> ready_{false};
  std::string last_config_description_;
  InformerFactory make_informer_;
  std::function<void()> on_topology_change_;
  std::function<void(const std::string&)> on_pool_change_;
  std::unique_ptr<net::Informer> node_;
  std::unique_ptr<net::Informer> pools_;          // apps.openyurt.io/v1beta2
  std::unique_ptr<net::Informer> pools_v1beta1_;  // only when v1beta2 is not served
  std::unique_ptr<net::Informer> services_;
};

}  // namespace yurthub::filters
