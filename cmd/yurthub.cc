// yurthub: the node's proxy to the cloud apiserver. Thin main: flags -> options -> credentials
// -> node cache -> filters -> Hub (with the OTA endpoints on its admin port). A bad flag or
// unreadable credential is one line on stderr and exit status 2; a listener that cannot bind or a
// cache that cannot open is exit status 1.
//
//   yurthub --server-addr=... --node-name=...       run the hub
//   yurthub cache ls|get|stats [--disk-cache-path=DIR]   inspect the node's cache (read-only)
//   yurthub journal ls [--disk-cache-path=DIR]           offline writes waiting for replay
#include <algorithm>
#include <iostream>
#include <string_view>

#include "base/log.h"
#include "cache/autonomy_keeper.h"
#include "cache/inspect.h"
#include "cache/node_cache.h"
#include "filters/filter_manager.h"
#include "filters/hub_address.h"
#include "hub/certificate/api_call.h"
#include "hub/certificate/certificate_files.h"
#include "hub/certificate/client_certificate_manager.h"
#include "hub/certificate/kubeconfig_reloader.h"
#include "hub/certificate/serving_certificate_manager.h"
#include "hub/hub.h"
#include "hub/node_ip.h"
#include "hub/options.h"
#include "hub/version.h"
#include "kube/kubeconfig.h"
#include "net/files.h"
#include "ota/ota_handler.h"
#include "pool/pool_sharing.h"

namespace {

int fail(const std::string& message, int code) {
  std::cerr << "yurthub: " << message << "\n";
  return code;
}

// `yurthub cache|journal ...`: the cache directory comes from --disk-cache-path, as for the hub.
int cache_command(int argc, char** argv) {
  std::vector<std::string> args;
  std::string dir = yurthub::hub::HubOptions{}.disk_cache_path;
  for (int i = 2; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.rfind("--disk-cache-path=", 0) == 0)
      dir = std::string(arg.substr(18));
    else if (arg == "--disk-cache-path" && i + 1 < argc)
      dir = argv[++i];
    else
      args.emplace_back(arg);
  }
  if (std::string_view(argv[1]) == "journal") {
    return yurthub::cache::run_journal_command(args, dir, std::cout, std::cerr);
  }
  return yurthub::cache::run_cache_command(args, dir, std::cout, std::cerr);
}

std::unique_ptr<yurthub::cache::NodeCache> open_cache(const yurthub::hub::HubOptions& o,
                                                      yurthub::base::MetricsRegistry& registry,
                                                      std::string& error) {
  yurthub::cache::NodeCache::Options cache;
  cache.node_name = o.node_name;
  cache.store.directory = o.disk_cache_path;
  cache.store.map_size = static_cast<std::uint64_t>(o.disk_cache_size_mb) << 20;
  cache.offline.min_request_timeout = o.min_request_timeout;
  cache.offline.bookmark_interval = std::chrono::seconds(o.offline_watch_bookmark_seconds);
  cache.journal.max_entries = static_cast<std::size_t>(o.journal_max_entries);
  cache.journal.max_bytes = static_cast<std::uint64_t>(o.journal_max_size_mb) << 20;
  cache.journal.max_events = static_cast<std::size_t>(o.journal_max_events);
  auto opened = yurthub::cache::NodeCache::open(cache, registry);
  if (!opened) {
    error = "cannot open the cache in " + o.disk_cache_path + ": " + opened.error().message;
    return nullptr;
  }
  return std::move(*opened);
}

yurthub::hub::ClientCertificateSettings certificate_settings(const yurthub::hub::HubOptions& o) {
  yurthub::hub::ClientCertificateSettings settings;
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

// The Autonomy condition's line to the cloud: straight to a healthy apiserver with the hub's own
// identity (never the proxy port, whose offline path would answer or journal it).
boost::asio::awaitable<yurthub::Result<yurthub::cache::CloudAnswer>> call_cloud(
    boost::asio::any_io_executor executor, std::optional<yurthub::hub::ServerAddress> server,
    yurthub::net::UpstreamTls tls, yurthub::cache::CloudRequest request) {
  if (!server)
    co_return yurthub::make_error(yurthub::ErrorCode::Unavailable, "no healthy apiserver");
  yurthub::hub::ApiCall call{boost::beast::http::string_to_verb(request.method),
                             std::move(request.target), std::move(request.body),
                             std::move(request.content_type), "autonomy"};
  auto answer = co_await yurthub::hub::api_call(executor, *server, tls, std::move(call),
                                                std::chrono::seconds(10));
  if (!answer) co_return answer.error();
  co_return yurthub::cache::CloudAnswer{answer->status, std::move(answer->body)};
}

// Edge mode: the node's Autonomy condition (cache/autonomy_keeper.h), from the cache's health,
// or Unknown when the cache could not be opened (`cache_error`).
std::unique_ptr<yurthub::cache::AutonomyKeeper> start_autonomy(
    yurthub::hub::Hub& hub, const std::string& node_name, const yurthub::net::UpstreamTls& tls,
    yurthub::cache::NodeCache* node_cache, const std::string& cache_error,
    yurthub::base::MetricsRegistry& registry) {
  using yurthub::cache::CacheHealth;
  yurthub::cache::AutonomyKeeper::Settings settings;
  settings.node_name = node_name;
  settings.executor = hub.main_executor();
  settings.call_cloud = [&hub, tls](yurthub::cache::CloudRequest request) {
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
  settings.unix_now = [] {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  auto keeper = std::make_unique<yurthub::cache::AutonomyKeeper>(std::move(settings), registry);
  keeper->start();
  return keeper;
}

}  // namespace

static int run_hub(int argc, char** argv) {
  using namespace yurthub;
  if (argc >= 2 &&
      (std::string_view(argv[1]) == "cache" || std::string_view(argv[1]) == "journal")) {
    return cache_command(argc, argv);
  }
  auto options = hub::parse_flags(argc, argv);
  if (!options) return fail(options.error().message, 2);
  if (options->show_help) {
    std::cout << hub::usage();
    return 0;
  }
  if (options->show_version) {
    std::cout << "yurthub " << hub::kVersion << "\n";
    return 0;
  }
  log::set_min_level(options->verbosity >= 4 ? log::Level::Debug : log::Level::Info);
  for (const auto& flag : options->ignored_flags) {
    YH_LOG(Warning) << "flag " << flag << " is accepted for compatibility with YurtHub and ignored";
  }
  base::MetricsRegistry registry;
  std::unique_ptr<hub::ClientCertificateManager> certificates;
  Result<kube::Credentials> credentials = make_error("not loaded");
  if (hub::manages_own_certificate(*options)) {
    certificates =
        std::make_unique<hub::ClientCertificateManager>(certificate_settings(*options), registry);
    credentials = certificates->obtain();
  } else {
    credentials = net::load_kubeconfig(options->kubeconfig);
  }
  if (!credentials) return fail(credentials.error().message, 2);
  auto upstream_tls = net::make_upstream_tls(*credentials);
  if (!upstream_tls) return fail(upstream_tls.error().message, 2);
  const auto hub_identity = upstream_tls->hub_identity;
  const auto hub_token = upstream_tls->hub_token;
  // After the credentials (a bad kubeconfig's exit 2 is one line on stderr), before the serving
  // certificate, which names it.
  hub::default_node_ip(*options);
  // The hub's certificate is renewed by the manager, or its credentials (certificate, token) are
  // followed in the kubeconfig when someone else (kubelet, an operator's tooling) renews them.
  std::unique_ptr<hub::KubeconfigReloader> reloader;
  if (!certificates) {
    reloader = std::make_unique<hub::KubeconfigReloader>(options->kubeconfig, *credentials,
                                                         hub_identity, hub_token, registry);
  }
  // The HTTPS port's certificate: the operator's files, or one by CSR in either bootstrap mode,
  // requested as the hub's identity or kubelet's (docs/operations.md).
  std::shared_ptr<net::ReplaceableContext> server_tls;
  std::unique_ptr<hub::ServingCertificateManager> serving;
  if (!options->tls_cert_file.empty() || !options->tls_private_key_file.empty()) {
    auto loaded = net::make_server_tls(options->tls_cert_file, options->tls_private_key_file);
    if (!loaded) return fail(loaded.error().message, 2);
    server_tls = std::make_shared<net::ReplaceableContext>(std::move(*loaded));
  } else if (certificates) {
    serving = std::make_unique<hub::ServingCertificateManager>(
        hub::serving_settings(*options), [&certificates] { return certificates->current(); },
        registry);
  } else if (options->bootstrap_mode == hub::BootstrapMode::KubeletCertificate) {
    serving = std::make_unique<hub::ServingCertificateManager>(
        hub::serving_settings(*options),
        [&reloader] { return std::optional<kube::Credentials>(reloader->current()); }, registry);
  }
  if (serving) server_tls = serving->obtain();

  YH_LOG(Info) << "yurthub " << hub::kVersion << " starting for node " << options->node_name;
  if (auto warning = hub::unsafe_directory_warning(options->root_dir)) {
    YH_LOG(Warning) << "root dir: " << *warning;
  }
  std::unique_ptr<cache::NodeCache> node_cache;
  std::string cache_error;
  if (options->working_mode == hub::WorkingMode::Edge) {
    node_cache = open_cache(*options, registry, cache_error);
    // The cache must never stop the hub: without it the node is still served online, where a
    // restart loop would leave the proxy port free for any local user to bind.
    auto& available = registry.gauge("node_yurthub_cache_available",
                                     "1 when the node cache is in use, 0 when it could not be "
                                     "opened and the hub serves online only.",
                                     {});
    available.with({}).set(node_cache ? 1 : 0);
    if (!node_cache) {
      cache::error_keys_count_family(registry).with({}).set(0);
      cache::error_keys_persistency_family(registry).with({}).set(0);
      YH_LOG(Error) << cache_error
                    << "; the hub runs WITHOUT its cache: nothing is kept for offline use";
    }
  }
  filters::FilterManagerSettings filter_settings;
  filter_settings.flags.enabled = options->enable_resource_filter;
  filter_settings.flags.disabled = options->disabled_resource_filters;
  filter_settings.flags.cloud_mode = options->working_mode == hub::WorkingMode::Cloud;
  filter_settings.node_name = options->node_name;
  filter_settings.nodepool_name = options->nodepool_name;
  filter_settings.hub_port = static_cast<unsigned short>(options->proxy_secure_port);
  const auto address = filters::in_cluster_hub_address(
      {options->bind_proxy_address, options->bind_proxy_secure_address, options->enable_dummy_if,
       options->dummy_if_ip},
      server_tls != nullptr);
  filter_settings.hub_host = address.host;
  if (address.host.empty()) {
    YH_LOG(Warning) << "masterservice, forwardkubesvctraffic and serviceenvupdater leave objects "
                       "unchanged: "
                    << address.why;
  }
  filters::FilterManager filter_manager(filter_settings, registry);

  // Before the Hub, so it outlives the admin port's connections that call it.
  std::unique_ptr<ota::OtaHandler> ota_handler;
  ota::OtaHandler::Settings ota_settings;
  ota_settings.node_name = options->node_name;
  const std::string node_name = options->node_name;
  const bool edge = options->working_mode == hub::WorkingMode::Edge;
  const net::UpstreamTls cloud_tls = *upstream_tls;  // shares the hub's renewed identity
  // Declared before the Hub: its loop's frame may outlive hub.run() until the Hub's executors go.
  std::unique_ptr<cache::AutonomyKeeper> autonomy;
  // Before the Hub too: the Hub's connections answer from it.
  std::unique_ptr<pool::PoolSharing> pool_sharing;
  if (edge && options->pool_sharing) {
    pool::PoolSharingSettings pool_settings;
    pool_settings.node_name = node_name;
    pool_settings.min_request_timeout = options->min_request_timeout;
    pool_settings.extra_resources = options->pool_scope_resources;
    pool_settings.multiplexer_port = static_cast<unsigned short>(options->multiplexer_port);
    pool_settings.node_identity = hub_identity;
    pool_settings.node_cache = node_cache.get();
    pool_sharing = std::make_unique<pool::PoolSharing>(std::move(pool_settings), registry);
    if (node_cache) node_cache->policy().add_agent(pool_sharing->cache().user_agent());
  }
  hub::Hub hub(std::move(*options), std::move(*upstream_tls), std::move(server_tls), registry,
               node_cache.get());
  if (certificates) {
    hub.on_join_token([&certificates](const std::string& token) {
      return certificates->update_join_token(token);
    });
  }
  ota_handler = std::make_unique<ota::OtaHandler>(
      std::move(ota_settings), [&hub] { return hub.pick_healthy_server(); }, hub.upstream_tls(),
      node_cache ? &node_cache->store() : nullptr, registry);
  hub.add_admin_routes(ota_handler->routes());
  hub.set_filters(&filter_manager, [&filter_manager] { return filter_manager.not_ready_reason(); });
  if (pool_sharing) {
    hub.set_shared_cache(&pool_sharing->cache());
    // Followers' certificates are checked against the cluster CA the hub trusts upstream.
    auto cluster_ca = net::make_client_ca_store(credentials->ca_pem);
    if (cluster_ca) {
      hub.serve_followers(std::move(*cluster_ca));
    } else {
      YH_LOG(Warning) << "multiplexer port disabled: " << cluster_ca.error().message;
    }
    pool_sharing->cache().set_pool_membership([&filter_manager](std::string_view node) {
      auto view = filter_manager.view();
      return view && view->pool_known && view->pool_nodes.count(std::string(node)) > 0;
    });
  }
  if (serving) hub.add_readiness_check([&serving] { return serving->pending_reason(); });
  hub.on_config([&filter_manager](const std::map<std::string, std::string>& data) {
    filter_manager.set_config(data);
  });
  if (node_cache) {
    hub.on_config([&policy = node_cache->policy()](const std::map<std::string, std::string>& data) {
      auto agents = data.find("cache_agents");
      policy.set_extra_agents(agents == data.end() ? "" : agents->second);
      std::string names;
      for (const auto& name : policy.agents()) names += (names.empty() ? "" : ",") + name;
      YH_LOG(Info) << "cache agents: " << names;
    });
  }
  if (auto started = hub.start(); !started) return fail(started.error().message, 1);
  if (certificates) {
    certificates->start(hub_identity);
    if (serving) serving->start(certificates->executor());
  } else {
    if (serving) {
      reloader->on_change([&serving] { serving->identity_changed(); });
      serving->start(reloader->executor());
    }
    reloader->start();
  }
  // Upstream keeps the condition only in edge mode (its autonomy proxy): none in cloud mode.
  if (edge) {
    autonomy = start_autonomy(hub, node_name, cloud_tls, node_cache.get(), cache_error, registry);
  }
  filter_manager.set_hub_port(hub.secure_port());
  auto make_informer = [&hub](net::InformerOptions o, net::Informer::OnChange on_change) {
    return hub.make_informer(std::move(o), std::move(on_change));
  };
  if (pool_sharing) {
    auto [host, port] = hub.proxy_address();
    pool_sharing->start(
        hub.main_executor(), host, port, [&hub] { return hub.online(); }, make_informer);
    // The pool's leader-hub ConfigMap follows the node's pool, which the filters learn.
    filter_manager.on_pool_change([&pool_sharing](const std::string& pool) {
      if (pool_sharing) pool_sharing->set_pool(pool);
    });
  }
  filter_manager.start(make_informer, [&hub] { hub.notify_filters_changed(); });
  const int code = hub.run();
  if (autonomy) autonomy->stop();
  if (certificates) certificates->stop();
  reloader.reset();  // its thread renews the serving certificate: stopped before that goes
  filter_manager.stop();
  if (pool_sharing) pool_sharing->stop();
  if (node_cache) node_cache->stop_replay();  // before the Hub and its executors go
  return code;
}

int main(int argc, char** argv) {
  // Every failure the hub expects is a Result; an exception reaching here is a bug. It is
  // reported and the process exits (systemd restarts it) rather than aborting without a word.
  try {
    return run_hub(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "yurthub: stopped by an exception (a bug): " << e.what() << "\n";
  } catch (...) {
    std::cerr << "yurthub: stopped by an exception (a bug) of unknown type\n";
  }
  return 1;
}
