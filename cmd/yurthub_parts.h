// The pieces cmd/node_hub.cc assembles the hub from: the node cache, the filters' settings, the
// pool's shared cache and its ties to the Hub, the identity's upkeep, the Autonomy condition. Each
// is built from the flags and what NodeHub already has; NodeHub keeps every object (the order of
// its members is their lifetimes).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "base/metrics.h"
#include "base/result.h"
#include "cache/autonomy_keeper.h"
#include "cache/node_cache.h"
#include "filters/filter_manager.h"
#include "hub/certificate/client_certificate_manager.h"
#include "hub/certificate/kubeconfig_reloader.h"
#include "hub/certificate/serving_certificate_manager.h"
#include "hub/hub.h"
#include "hub/options.h"
#include "net/tls.h"
#include "ota/ota_handler.h"
#include "pool/pool_sharing.h"

namespace yurthub::cmd {

// The hub's identity towards the apiserver: its own client certificate, renewed by the manager
// (when the hub manages it), or the kubeconfig's credentials (certificate, token), followed by the
// reloader as someone else (kubelet, an operator's tooling) renews them. Members in the order
// NodeHub keeps them (destroyed in reverse).
struct HubCredentials {
  std::unique_ptr<hub::ClientCertificateManager> certificates;  // null: the kubeconfig's
  kube::Credentials credentials;
  net::UpstreamTls upstream_tls;  // moved into the Hub
  std::shared_ptr<net::ReplaceableContext> hub_identity;
  std::shared_ptr<net::ReplaceableToken> hub_token;
  std::unique_ptr<hub::KubeconfigReloader> reloader;  // when `certificates` is null
};
// Obtains them; an error is a bad kubeconfig, certificate or token (exit status 2).
Result<HubCredentials> load_credentials(const hub::HubOptions& o, base::MetricsRegistry& registry);

// The HTTPS port's certificate: the operator's files, or one by CSR in either bootstrap mode,
// requested as the hub's identity or kubelet's (docs/operations.md); neither when no mode gives
// one. REQUIRES: `o`'s node IP defaulted (the certificate names it).
struct ServingTls {
  std::shared_ptr<net::ReplaceableContext> context;
  std::unique_ptr<hub::ServingCertificateManager> manager;  // a certificate by CSR
};
Result<ServingTls> make_serving_tls(const hub::HubOptions& o, const HubCredentials& credentials,
                                    base::MetricsRegistry& registry);

// The client certificate manager's settings, from the flags (token or bootstrap-file mode).
hub::ClientCertificateSettings certificate_settings(const hub::HubOptions& o);

// Edge mode: the node cache, or null (and `error` says why) when it cannot be opened. The cache
// must never stop the hub: without it the node is still served online, where a restart loop
// would leave the proxy port free for any local user to bind.
std::unique_ptr<cache::NodeCache> open_edge_cache(const hub::HubOptions& o,
                                                  base::MetricsRegistry& registry,
                                                  std::string& error);

// The filters' settings from the flags; `serving`: the HTTPS port has a certificate.
filters::FilterManagerSettings filter_settings(const hub::HubOptions& o, bool serving);

// Edge mode with --pool-sharing: the pool's shared cache (docs/pool-sharing.md), else null. Its
// reflectors' component is cached like an agent's.
std::unique_ptr<pool::PoolSharing> make_pool_sharing(
    const hub::HubOptions& o, std::shared_ptr<net::ReplaceableContext> node_identity,
    cache::NodeCache* node_cache, base::MetricsRegistry& registry);

// The Hub answers from the shared cache and, as its pool's leader, serves it to the followers
// whose certificates chain to `ca_pem` (the cluster CA the hub trusts upstream) and whose nodes
// are in the pool as the filters see it. Before hub.start().
void connect_pool(hub::Hub& hub, pool::PoolSharing& sharing, filters::FilterManager& filters,
                  const std::string& ca_pem);

// After hub.start(): the shared list+watches through the hub's port; the pool's leader-hub
// ConfigMap follows the node's pool, which the filters learn.
void start_pool(hub::Hub& hub, pool::PoolSharing& sharing, filters::FilterManager& filters,
                const pool::LeaderHubWatcher::InformerFactory& make_informer);

// After hub.start(): the hub's certificate renewed by its manager, or its kubeconfig followed
// (`reloader`, when someone else renews it), and the HTTPS port's certificate by CSR renewed on
// the same thread, requested again when the client identity changes.
void keep_identity_fresh(hub::ClientCertificateManager* certificates,
                         hub::KubeconfigReloader* reloader, hub::ServingCertificateManager* serving,
                         const std::shared_ptr<net::ReplaceableContext>& hub_identity);

// yurt-hub-cfg's `cache_agents` adds components whose responses the cache keeps.
void follow_cache_agents(hub::Hub& hub, cache::CachePolicy& policy);

// The OTA endpoints (ota/ota_handler.h) on the hub's admin port. The handler must outlive the
// admin port's connections: NodeHub declares the pointer before the Hub.
std::unique_ptr<ota::OtaHandler> add_ota_routes(hub::Hub& hub, const std::string& node_name,
                                                cache::NodeCache* node_cache,
                                                base::MetricsRegistry& registry);

// Edge mode: the node's Autonomy condition (cache/autonomy_keeper.h), from the cache's health,
// or Unknown when the cache could not be opened (`cache_error`).
std::unique_ptr<cache::AutonomyKeeper> start_autonomy(hub::Hub& hub, const std::string& node_name,
                                                      const net::UpstreamTls& tls,
                                                      cache::NodeCache* node_cache,
                                                      const std::string& cache_error,
                                                      base::MetricsRegistry& registry);

}  // namespace yurthub::cmd
