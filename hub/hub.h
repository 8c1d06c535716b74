// Hub: the whole proxy process. Builds the server set from the options, creates the dummy
// interface with --enable-dummy-if (and keeps it), binds the listeners (proxy 10261 on
// --bind-proxy-address and on the dummy IP, HTTPS proxy 10268 when a serving certificate is
// configured, admin 10267; the ones on the dummy IP once it exists, when it could not be made at
// start), starts the health checker and the worker threads, and on SIGTERM or
// SIGINT drains: stops accepting, ends streams, lets short requests finish (at most
// kDrainTimeout), deletes the dummy interface, then returns. Created and run by cmd/yurthub.cc.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>

#include "hub/admin_server.h"
#include "hub/dummy_interface_keeper.h"
#include "hub/health_checker.h"
#include "hub/hub_metrics.h"
#include "hub/listener.h"
#include "hub/options.h"
#include "hub/server_set.h"
#include "hub/worker.h"
#include "net/informer.h"
#include "net/timer.h"
#include "net/tls.h"

namespace yurthub::hub {

class Hub {
 public:
  static constexpr std::chrono::seconds kDrainTimeout{15};

  // `server_tls` is the HTTPS proxy port's context (each accepted connection takes the current
  // one), or null to leave that port off. `cache` is
  // the node cache (edge mode), or null (cloud mode); it must outlive the Hub.
  Hub(HubOptions options, net::UpstreamTls upstream_tls,
      std::shared_ptr<net::ReplaceableContext> server_tls, base::MetricsRegistry& registry,
      CacheHooks* cache);

  // The data of ConfigMap <namespace>/yurt-hub-cfg ({} when absent), each time it changes.
  using ConfigListener = std::function<void(const std::map<std::string, std::string>& data)>;
  // REQUIRES: called before start(). Listeners run on the first worker's thread.
  void on_config(ConfigListener listener) { config_listeners_.push_back(std::move(listener)); }
  // POST /v1/token on the admin port hands a new join token to `update`. Before start().
  void on_join_token(AdminServer::TokenUpdate update) { token_update_ = std::move(update); }
  // More endpoints on the admin port (the OTA endpoints). Before start().
  void add_admin_routes(AdminRoutes routes) { admin_routes_ = std::move(routes); }
  ~Hub();

  // The response filters, and why they are not ready (nullopt when ready). REQUIRES: called
  // before start(); `filters` outlives the Hub.
  void set_filters(FilterHooks* filters, std::function<std::optional<std::string>()> not_ready);
  // The pool's shared watch cache, which answers lists and watches of pool-scope resources.
  // REQUIRES: called before start(); `pool` outlives the Hub.
  void set_shared_cache(SharedCacheHooks* pool);
  // Serves the multiplexer port (--node-ip:--multiplexer-port) to the follower hubs of the pool,
  // whose client certificates must chain to `cluster_ca` (hub/proxy_session_followers_impl.h).
  // Needs the shared cache and a serving certificate; a port that cannot be bound is logged and
  // left off. REQUIRES: called before start().
  void serve_followers(std::shared_ptr<X509_STORE> cluster_ca) {
    cluster_ca_ = std::move(cluster_ca);
  }
  // One more reason /v1/readyz may give (nullopt when that part is ready); called on the first
  // worker's thread, so it must be thread-safe. REQUIRES: called before start().
  void add_readiness_check(std::function<std::optional<std::string>()> check) {
    readiness_checks_.push_back(std::move(check));
  }
  // An informer that lists and watches through this hub's own proxy port as "yurthub", on the
  // first worker's thread (its callback runs there). `options` needs name and path (and
  // selectors); the rest is filled in. REQUIRES: start() succeeded.
  std::unique_ptr<net::Informer> make_informer(net::InformerOptions options,
                                               net::Informer::OnChange on_change);
  // A healthy apiserver (by --lb-mode), as the proxy would pick one; nullopt while none is (the
  // node is offline). Thread-safe. REQUIRES: start() succeeded.
  std::optional<ServerAddress> pick_healthy_server() const;
  // The hub's own identity towards the apiservers (for hub/certificate/api_call.h). Its
  // credentials follow renewals; the reference lives as long as the Hub.
  const net::UpstreamTls& upstream_tls() const { return tls_; }
  // The HTTPS proxy port as bound (as configured while it waits for the dummy interface); 0 when
  // it is off. REQUIRES: start() succeeded, called on the main thread.
  unsigned short secure_port() const;
  // The first worker's executor, for background work (the Autonomy condition). REQUIRES: start()
  // succeeded.
  boost::asio::any_io_executor main_executor();
  // The plain proxy port's address ("127.0.0.1", 10261), for the hub's own clients of it.
  std::pair<std::string, unsigned short> proxy_address() const;
  // Whether any apiserver is healthy. Thread-safe. REQUIRES: start() succeeded.
  bool online() const;
  // Has every filtered watch being relayed corrected (the filters' inputs changed). Thread-safe.
  void notify_filters_changed();

  // Creates the dummy interface (with --enable-dummy-if), binds the listeners and starts
  // background work. Errors say what failed.
  Status start();
  // Runs until a signal (or request_stop()) and the drain that follows; returns the exit code.
  int run();
  // Starts a drain as if SIGTERM had arrived. Thread-safe.
  void request_stop();

 private:
  void begin_drain(const char* why);
  void wait_for_drain(std::chrono::steady_clock::time_point deadline);
  std::optional<std::string> not_ready_reason() const;
  void on_server_health(std::size_t server, bool healthy);
  void start_config_informer();
  Status bind_proxy_listeners(net::InheritedListeners* inherited);
  // The listeners that may have to wait for the dummy interface: the plain proxy on the dummy IP,
  // and the HTTPS proxy (when its address is the dummy IP).
  enum class DeferredListener { PlainOnDummyIp, Secure };
  // Binds `which` now, or, when its address is the dummy IP and the interface is missing (and
  // systemd handed over no socket for it), remembers it for bind_deferred_listeners().
  Status bind_or_defer(DeferredListener which, net::InheritedListeners* inherited);
  // The multiplexer port, when serve_followers() asked for it; a failure is logged only.
  void bind_multiplexer_listener(net::InheritedListeners* inherited);
  // Binds the listeners that waited; the keeper calls it once the dummy interface exists.
  void bind_deferred_listeners();
  static void log_listening(const Listener& listener);
  // Lines added to /v1/readyz's body that do not make the hub unready ("" when none).
  std::string readiness_notes() const;

  HubOptions options_;
  base::MetricsRegistry& registry_;
  HubMetrics metrics_;
  CacheHooks* cache_;
  std::vector<ConfigListener> config_listeners_;
  FilterHooks* filters_ = nullptr;
  SharedCacheHooks* pool_ = nullptr;
  std::shared_ptr<X509_STORE> cluster_ca_;  // the multiplexer port's trust (serve_followers)
  std::function<std::optional<std::string>()> filters_not_ready_;
  std::vector<std::function<std::optional<std::string>()>> readiness_checks_;
  net::UpstreamTls tls_;
  std::shared_ptr<net::ReplaceableContext> server_tls_;  // replaced when the serving cert renews
  std::unique_ptr<ServerSet> servers_;
  std::unique_ptr<SharedState> shared_;
  // Workers are declared before everything that runs on them, so they are destroyed last.
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<DummyInterfaceKeeper> dummy_if_;
  std::unique_ptr<HealthChecker> health_;
  std::unique_ptr<net::Informer> config_informer_;
  std::unique_ptr<AdminServer> admin_server_;
  AdminServer::TokenUpdate token_update_;
  AdminRoutes admin_routes_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::vector<DeferredListener> deferred_;  // waiting for the dummy interface (main thread)
  std::unique_ptr<boost::asio::signal_set> signals_;
  std::unique_ptr<net::Timer> drain_timer_;
  bool draining_started_ = false;
};

// The string values of the `data` of the ConfigMaps in `objects` (the config informer's snapshot:
// <namespace>/yurt-hub-cfg, or nothing when it is absent), as the on_config listeners get them;
// other values and objects without `data` are skipped. Declared here for
// test/fuzz/yurt_hub_cfg_fuzz.cc, which feeds it whatever the apiserver could send.
std::map<std::string, std::string> config_map_data(const net::ObjectMap& objects);

}  // namespace yurthub::hub
