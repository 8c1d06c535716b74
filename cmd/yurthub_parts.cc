// The pieces cmd/node_hub.cc assembles the hub from; see yurthub_parts.h.
#include "cmd/yurthub_parts.h"

#include <boost/beast/http/verb.hpp>

#include "base/clock.h"
#include "base/log.h"
#include "cache/autonomy_keeper.h"
#include "filters/hub_address.h"
#include "hub/certificate/api_call.h"
#include "hub/options.h"
#include "net/files.h"

namespace yurthub::cmd {

Result<HubCredentials> load_credentials(const hub::HubOptions& o, base::MetricsRegistry& registry) {
  HubCredentials out;
  Result<kube::Credentials> loaded = make_error("not loaded");
  if (hub::manages_own_certificate(o)) {
    out.certificates =
        std::make_unique<hub::ClientCertificateManager>(certificate_settings(o), registry);
    loaded = out.certificates->obtain();
  } else {
    loaded = net::load_kubeconfig(o.kubeconfig);
  }
  if (!loaded) return loaded.error();
  out.credentials = std::move(*loaded);
  auto tls = net::make_upstream_tls(out.credentials);
  if (!tls) return tls.error();
  out.upstream_tls = std::move(*tls);
  out.hub_identity = out.upstream_tls.hub_identity;
  out.hub_token = out.upstream_tls.hub_token;
  if (!out.certificates) {
    out.reloader = std::make_unique<hub::KubeconfigReloader>(
        o.kubeconfig, out.credentials, out.hub_identity, out.hub_token, registry);
  }
  return out;
}

Result<ServingTls> make_serving_tls(const hub::HubOptions& o, const HubCredentials& credentials,
                                    base::MetricsRegistry& registry) {
  ServingTls out;
  if (!o.tls_cert_file.empty() || !o.tls_private_key_file.empty()) {
    auto loaded = net::make_server_tls(o.tls_cert_file, o.tls_private_key_file);
    if (!loaded) return loaded.error();
    out.context = std::make_shared<net::ReplaceableContext>(std::move(*loaded));
    return out;
  }
  if (auto* certificates = credentials.certificates.get()) {
    out.manager = std::make_unique<hub::ServingCertificateManager>(
        hub::serving_settings(o), [certificates] { return certificates->current(); }, registry);
  } else if (o.bootstrap_mode == hub::BootstrapMode::KubeletCertificate) {
    out.manager = std::make_unique<hub::ServingCertificateManager>(
        hub::serving_settings(o),
        [reloader = credentials.reloader.get()] {
          return std::optional<kube::Credentials>(reloader->current());
        },
        registry);
  }
  if (out.manager) out.context = out.manager->obtain();
  return out;
}
namespace {

std::unique_ptr<cache::NodeCache> open_cache(const hub::HubOptions& o,
                                             base::MetricsRegistry& registry, std::string& error) {
  cache::NodeCache::Options settings;
  settings.node_name = o.node_name;
  settings.store.directory = o.disk_cache_path;
  settings.store.map_size = static_cast<std::uint64_t>(o.disk_cache_size_mb) << 20;
  settings.offline.min_request_timeout = o.min_request_timeout;
  settings.offline.bookmark_interval = std::chrono::seconds(o.offline_watch_bookmark_seconds);
  settings.journal.max_entries = static_cast<std::size_t>(o.journal_max_entries);
  settings.journal.max_bytes = static_cast<std::uint64_t>(o.journal_max_size_mb) << 20;
  settings.journal.max_events = static_cast<std::size_t>(o.journal_max_events);
  auto opened = cache::NodeCache::open(settings, registry);
  if (!opened) {
    error = "cannot open the cache in " + o.disk_cache_path + ": " + opened.error().message;
    return nullptr;
  }
  return std::move(*opened);
}

// The Autonomy condition's line to the cloud: straight to a healthy apiserver with the hub's own
// identity (never the proxy port, whose offline path would answer or journal it).
boost::asio::awaitable<Result<cache::CloudAnswer>> call_cloud(
    boost::asio::any_io_executor executor, std::optional<hub::ServerAddress> server,
    net::UpstreamTls tls, cache::CloudRequest request) {
  if (!server) co_return make_error(ErrorCode::Unavailable, "no healthy apiserver");
  hub::ApiCall call{boost::beast::http::string_to_verb(request.method), std::move(request.target),
                    std::move(request.body), std::move(request.content_type), "autonomy"};
  auto answer =
      co_await hub::api_call(executor, *server, tls, std::move(call), std::chrono::seconds(10));
  if (!answer) co_return answer.error();
  co_return cache::CloudAnswer{answer->status, std::move(answer->body)};
}

}  // namespace

hub::ClientCertificateSettings certificate_settings(const hub::HubOptions& o) {
  hub::ClientCertificateSettings settings;
  settings.root_dir = o.root_dir;
  settings.node_name = o.node_name;
  settings.extra_organizations = o.hub_cert_organizations;
  settings.bootstrap_file = o.bootstrap_file;
  settings.discovery.join_token = o.join_token;
  settings.discovery.ca_cert_hashes = o.discovery_token_ca_cert_hashes;
  settings.discovery.unsafe_skip_ca_verification = o.discovery_token_unsafe_skip_ca_verification;
  settings.servers = o.servers;
  return settings;
}

std::unique_ptr<cache::NodeCache> open_edge_cache(const hub::HubOptions& o,
                                                  base::MetricsRegistry& registry,
                                                  std::string& error) {
  if (o.working_mode != hub::WorkingMode::Edge) return nullptr;
  auto node_cache = open_cache(o, registry, error);
  auto& available = registry.gauge("node_yurthub_cache_available",
                                   "1 when the node cache is in use, 0 when it could not be "
                                   "opened and the hub serves online only.",
                                   {});
  available.with({}).set(node_cache ? 1 : 0);
  if (!node_cache) {
    cache::error_keys_count_family(registry).with({}).set(0);
    cache::error_keys_persistency_family(registry).with({}).set(0);
    YH_LOG(Error) << error << "; the hub runs WITHOUT its cache: nothing is kept for offline use";
  }
  return node_cache;
}

filters::FilterManagerSettings filter_settings(const hub::HubOptions& o, bool serving) {
  filters::FilterManagerSettings settings;
  settings.flags.enabled = o.enable_resource_filter;
  settings.flags.disabled = o.disabled_resource_filters;
  settings.flags.cloud_mode = o.working_mode == hub::WorkingMode::Cloud;
  settings.node_name = o.node_name;
  settings.nodepool_name = o.nodepool_name;
  settings.hub_port = static_cast<unsigned short>(o.proxy_secure_port);
  const auto address = filters::in_cluster_hub_address(
      {o.bind_proxy_address, o.bind_proxy_secure_address, o.enable_dummy_if, o.dummy_if_ip},
      serving);
  settings.hub_host = address.host;
  if (address.host.empty()) {
    YH_LOG(Warning) << "masterservice, forwardkubesvctraffic and serviceenvupdater leave objects "
                       "unchanged: "
                    << address.why;
  }
  return settings;
}

std::unique_ptr<pool::PoolSharing> make_pool_sharing(
    const hub::HubOptions& o, std::shared_ptr<net::ReplaceableContext> node_identity,
    cache::NodeCache* node_cache, base::MetricsRegistry& registry) {
  if (o.working_mode != hub::WorkingMode::Edge || !o.pool_sharing) return nullptr;
  pool::PoolSharingSettings settings;
  settings.node_name = o.node_name;
  settings.min_request_timeout = o.min_request_timeout;
  settings.extra_resources = o.pool_scope_resources;
  settings.multiplexer_port = static_cast<unsigned short>(o.multiplexer_port);
  settings.node_identity = std::move(node_identity);
  settings.node_cache = node_cache;
  auto sharing = std::make_unique<pool::PoolSharing>(std::move(settings), registry);
  if (node_cache) node_cache->policy().add_agent(sharing->cache().user_agent());
  return sharing;
}

void connect_pool(hub::Hub& hub, pool::PoolSharing& sharing, filters::FilterManager& filters,
                  const std::string& ca_pem) {
  hub.set_shared_cache(&sharing.cache());
  auto cluster_ca = net::make_client_ca_store(ca_pem);
  if (cluster_ca) {
    hub.serve_followers(std::move(*cluster_ca));
  } else {
    YH_LOG(Warning) << "multiplexer port disabled: " << cluster_ca.error().message;
  }
  sharing.cache().set_pool_membership([&filters](std::string_view node) {
    auto view = filters.view();
    return view && view->pool_known && view->pool_nodes.count(std::string(node)) > 0;
  });
}

void start_pool(hub::Hub& hub, pool::PoolSharing& sharing, filters::FilterManager& filters,
                const pool::LeaderHubWatcher::InformerFactory& make_informer) {
  auto [host, port] = hub.proxy_address();
  sharing.start(
      hub.main_executor(), host, port, [&hub] { return hub.online(); }, make_informer);
  filters.on_pool_change([&sharing](const std::string& pool) { sharing.set_pool(pool); });
}

void keep_identity_fresh(hub::ClientCertificateManager* certificates,
                         hub::KubeconfigReloader* reloader, hub::ServingCertificateManager* serving,
                         const std::shared_ptr<net::ReplaceableContext>& hub_identity) {
  if (certificates) {
    certificates->start(hub_identity);
    if (serving) serving->start(certificates->executor());
    return;
  }
  if (serving) {
    reloader->on_change([serving] { serving->identity_changed(); });
    serving->start(reloader->executor());
  }
  reloader->start();
}

void follow_cache_agents(hub::Hub& hub, cache::CachePolicy& policy) {
  hub.on_config([&policy](const std::map<std::string, std::string>& data) {
    auto agents = data.find("cache_agents");
    policy.set_extra_agents(agents == data.end() ? "" : agents->second);
    std::string names;
    for (const auto& name : policy.agents()) names += (names.empty() ? "" : ",") + name;
    YH_LOG(Info) << "cache agents: " << names;
  });
}

std::unique_ptr<ota::OtaHandler> add_ota_routes(hub::Hub& hub, const std::string& node_name,
                                                cache::NodeCache* node_cache,
                                                base::MetricsRegistry& registry) {
  ota::OtaHandler::Settings settings;
  settings.node_name = node_name;
  auto handler = std::make_unique<ota::OtaHandler>(
      std::move(settings), [&hub] { return hub.pick_healthy_server(); }, hub.upstream_tls(),
      node_cache ? &node_cache->store() : nullptr, registry);
  hub.add_admin_routes(handler->routes());
  return handler;
}

std::unique_ptr<cache::AutonomyKeeper> start_autonomy(hub::Hub& hub, const std::string& node_name,
                                                      const net::UpstreamTls& tls,
                                                      cache::NodeCache* node_cache,
                                                      const std::string& cache_error,
                                                      base::MetricsRegistry& registry) {
  using cache::CacheHealth;
  cache::AutonomyKeeper::Settings settings;
  settings.node_name = node_name;
  settings.executor = hub.main_executor();
  settings.call_cloud = [&hub, tls](cache::CloudRequest request) {
    return call_cloud(hub.main_executor(), hub.pick_healthy_server(), tls, std::move(request));
  };
  settings.online = [&hub] { return hub.online(); };
  if (node_cache) {
    settings.cache_health = [node_cache] { return node_cache->health(); };
  } else {
    settings.cache_health = [cache_error] {
      return CacheHealth{CacheHealth::State::Unavailable, cache_error};
    };
  }
  settings.unix_now = &base::WallClock::unix_seconds;
  auto keeper = std::make_unique<cache::AutonomyKeeper>(std::move(settings), registry);
  keeper->start();
  return keeper;
}

}  // namespace yurthub::cmd
