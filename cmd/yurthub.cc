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
#include <optional>
#include <string_view>

#include "base/log.h"
#include "base/malloc_policy.h"
#include "cache/autonomy_keeper.h"
#include "cache/inspect.h"
#include "cache/node_cache.h"
#include "cmd/yurthub_parts.h"
#include "filters/filter_manager.h"
#include "hub/certificate/client_certificate_manager.h"
#include "hub/certificate/kubeconfig_reloader.h"
#include "hub/certificate/serving_certificate_manager.h"
#include "hub/hub.h"
#include "hub/node_ip.h"
#include "hub/options.h"
#include "hub/version.h"
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

// What needs no hub: the cache and journal subcommands, a bad flag, --help and --version. Returns
// the exit status when it answered; otherwise `options` holds the flags, and logging is set.
std::optional<int> answer_without_hub(int argc, char** argv,
                                      std::optional<yurthub::hub::HubOptions>& options) {
  using namespace yurthub;
  if (argc >= 2 &&
      (std::string_view(argv[1]) == "cache" || std::string_view(argv[1]) == "journal")) {
    return cache_command(argc, argv);
  }
  auto parsed = hub::parse_flags(argc, argv);
  if (!parsed) return fail(parsed.error().message, 2);
  if (parsed->show_help) {
    std::cout << hub::usage();
    return 0;
  }
  if (parsed->show_version) {
    std::cout << "yurthub " << hub::kVersion << "\n";
    return 0;
  }
  log::set_min_level(parsed->verbosity >= 4 ? log::Level::Debug : log::Level::Info);
  for (const auto& flag : parsed->ignored_flags) {
    YH_LOG(Warning) << "flag " << flag << " is accepted for compatibility with YurtHub and ignored";
  }
  options = std::move(*parsed);
  return std::nullopt;
}

}  // namespace

static int run_hub(int argc, char** argv) {
  using namespace yurthub;
  std::optional<hub::HubOptions> options;
  if (auto answered = answer_without_hub(argc, argv, options)) return *answered;
  base::MetricsRegistry registry;
  auto identity = cmd::load_credentials(*options, registry);
  if (!identity) return fail(identity.error().message, 2);
  auto& certificates = identity->certificates;
  auto& reloader = identity->reloader;
  const auto& hub_identity = identity->hub_identity;
  // After the credentials (a bad kubeconfig's exit 2 is one line on stderr), before the serving
  // certificate, which names it.
  hub::default_node_ip(*options);
  auto serving_tls = cmd::make_serving_tls(*options, *identity, registry);
  if (!serving_tls) return fail(serving_tls.error().message, 2);
  std::shared_ptr<net::ReplaceableContext> server_tls = std::move(serving_tls->context);
  auto& serving = serving_tls->manager;

  YH_LOG(Info) << "yurthub " << hub::kVersion << " starting for node " << options->node_name;
  if (auto warning = hub::unsafe_directory_warning(options->root_dir)) {
    YH_LOG(Warning) << "root dir: " << *warning;
  }
  std::string cache_error;
  std::unique_ptr<cache::NodeCache> node_cache =
      cmd::open_edge_cache(*options, registry, cache_error);
  filters::FilterManager filter_manager(cmd::filter_settings(*options, server_tls != nullptr),
                                        registry);

  // Before the Hub, so it outlives the admin port's connections that call it.
  std::unique_ptr<ota::OtaHandler> ota_handler;
  const std::string node_name = options->node_name;
  const bool edge = options->working_mode == hub::WorkingMode::Edge;
  const net::UpstreamTls cloud_tls = identity->upstream_tls;  // shares the hub's renewed identity
  // Declared before the Hub: its loop's frame may outlive hub.run() until the Hub's executors go.
  std::unique_ptr<cache::AutonomyKeeper> autonomy;
  // Before the Hub too: the Hub's connections answer from it.
  std::unique_ptr<pool::PoolSharing> pool_sharing =
      cmd::make_pool_sharing(*options, hub_identity, node_cache.get(), registry);
  hub::Hub hub(std::move(*options), std::move(identity->upstream_tls), std::move(server_tls),
               registry, node_cache.get());
  if (certificates) {
    hub.on_join_token([&certificates](const std::string& token) {
      return certificates->update_join_token(token);
    });
  }
  ota_handler = cmd::add_ota_routes(hub, node_name, node_cache.get(), registry);
  hub.set_filters(&filter_manager, [&filter_manager] { return filter_manager.not_ready_reason(); });
  if (pool_sharing)
    cmd::connect_pool(hub, *pool_sharing, filter_manager, identity->credentials.ca_pem);
  if (serving) hub.add_readiness_check([&serving] { return serving->pending_reason(); });
  hub.on_config([&filter_manager](const std::map<std::string, std::string>& data) {
    filter_manager.set_config(data);
  });
  if (node_cache) cmd::follow_cache_agents(hub, node_cache->policy());
  if (auto started = hub.start(); !started) return fail(started.error().message, 1);
  cmd::keep_identity_fresh(certificates.get(), reloader.get(), serving.get(), hub_identity);
  // Upstream keeps the condition only in edge mode (its autonomy proxy): none in cloud mode.
  if (edge) {
    autonomy =
        cmd::start_autonomy(hub, node_name, cloud_tls, node_cache.get(), cache_error, registry);
  }
  filter_manager.set_hub_port(hub.secure_port());
  auto make_informer = [&hub](net::InformerOptions o, net::Informer::OnChange on_change) {
    return hub.make_informer(std::move(o), std::move(on_change));
  };
  if (pool_sharing) cmd::start_pool(hub, *pool_sharing, filter_manager, make_informer);
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
    (void)yurthub::base::keep_freed_memory_for_reuse();  // before any thread allocates
    return run_hub(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "yurthub: stopped by an exception (a bug): " << e.what() << "\n";
  } catch (...) {
    std::cerr << "yurthub: stopped by an exception (a bug) of unknown type\n";
  }
  return 1;
}
