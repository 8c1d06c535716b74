// Process wiring and lifecycle; see hub.h.
#include "hub/hub.h"

#include <csignal>
#include <tuple>

#include <boost/asio/post.hpp>

#include "base/clock.h"
#include "base/log.h"
#include "hub/proxy_session.h"
#include "hub/version.h"

namespace yurthub::hub {
namespace asio = boost::asio;
using asio::ip::tcp;

Hub::Hub(HubOptions options, net::UpstreamTls upstream_tls,
         std::shared_ptr<net::ReplaceableContext> server_tls, base::MetricsRegistry& registry,
         CacheHooks* cache)
    : options_(std::move(options)),
      registry_(registry),
      metrics_(registry_),
      cache_(cache),
      tls_(std::move(upstream_tls)),
      server_tls_(std::move(server_tls)) {}

Hub::~Hub() {
  for (auto& w : workers_) {
    w->stop();
    w->join();
  }
}

Status Hub::start() {
  servers_ = std::make_unique<ServerSet>(options_.servers, options_.lb_mode);
  shared_.reset(new SharedState{options_, *servers_, tls_, metrics_});
  shared_->cache = cache_;
  shared_->connections = std::make_unique<ConnectionLimits>(options_.max_connections,
                                                            options_.max_connections_per_peer);
  auto replay_token = net::random_token();
  if (!replay_token) return replay_token.error();
  shared_->replay_token = std::move(*replay_token);
  shared_->filters = filters_;
  shared_->pool = pool_;
  for (int i = 0; i < options_.worker_threads; ++i) {
    workers_.push_back(std::make_unique<Worker>(*shared_));
  }
  asio::io_context& main_io = workers_[0]->io();

  for (std::size_t i = 0; i < servers_->size(); ++i) {
    metrics_.server_healthy.with({servers_->address(i).url}).set(0);
  }
  if (options_.working_mode == WorkingMode::Edge) {
    health_ = std::make_unique<HealthChecker>(
        main_io.get_executor(), *servers_, tls_, HealthChecker::settings_from(options_), metrics_,
        [this](std::size_t server, bool healthy) { on_server_health(server, healthy); });
    shared_->health = health_.get();
  } else {
    // Cloud mode has no cache to fall back on: every server is taken as healthy (as YurtHub).
    for (std::size_t i = 0; i < servers_->size(); ++i) {
      servers_->set_healthy(i, true);
      metrics_.server_healthy.with({servers_->address(i).url}).set(1);
    }
  }

  if (options_.enable_dummy_if) {
    // Before the listeners: the dummy IP must exist to be bound. YurtHub fails its start when it
    // cannot make it; this hub serves 127.0.0.1 without it and binds the dummy IP once it exists
    // (dummy_interface_keeper.h).
    net::DummyInterfaceSpec spec;
    spec.name = options_.dummy_if_name;
    spec.address = options_.dummy_if_ip;
    spec.kind = options_.dummy_if_kind;
    dummy_if_ =
        std::make_unique<DummyInterfaceKeeper>(main_io.get_executor(), std::move(spec), registry_);
    dummy_if_->on_first_ready([this] { bind_deferred_listeners(); });
    dummy_if_->start();
  }
  // Sockets systemd holds for the hub (yurthub.socket) are taken where the hub would bind; any
  // left untaken are closed, with a warning, when this goes out of scope.
  net::InheritedListeners inherited = net::InheritedListeners::from_environment();
  if (Status ok = bind_proxy_listeners(&inherited); !ok) return ok;

  admin_server_ = std::make_unique<AdminServer>(
      registry_, [this] { return not_ready_reason(); }, token_update_, shared_->connections.get(),
      admin_routes_, [this] { return readiness_notes(); });
  auto admin =
      Listener::bind(main_io, options_.bind_address, options_.serve_port, "admin", &inherited);
  if (!admin) return admin.error();
  (*admin)->start({workers_[0].get()},
                  [this](net::TcpSocket s, Worker&) { return admin_server_->serve(std::move(s)); });
  listeners_.push_back(std::move(*admin));

  for (auto& l : listeners_) log_listening(*l);
  if (health_) health_->start();
  start_config_informer();
  if (cache_) {
    // The journal's replay sends through the plain proxy port like any client on the node.
    cache_->start_replay(ReplayContext{
        main_io.get_executor(), listeners_[0]->local_endpoint().address().to_string(),
        listeners_[0]->local_endpoint().port(),
        [servers = servers_.get()] { return servers->any_healthy(); }, shared_->replay_token});
  }
  return {};
}

Status Hub::bind_proxy_listeners(net::InheritedListeners* inherited) {
  std::vector<Worker*> all;
  for (auto& w : workers_) all.push_back(w.get());
  auto plain = [](net::TcpSocket s, Worker& w) { return start_plain_session(std::move(s), w); };
  auto proxy = Listener::bind(workers_[0]->io(), options_.bind_proxy_address, options_.proxy_port,
                              "proxy", inherited);
  if (!proxy) return proxy.error();
  (*proxy)->start(all, plain);
  listeners_.push_back(std::move(*proxy));  // first: replay and informers use it

  // As YurtHub, the plain proxy also listens on the dummy IP, for pods; unlike YurtHub, it
  // requires their bearer token there (proxy_session.h). Not when --bind-proxy-address covers it.
  boost::system::error_code ec;
  const auto bound = asio::ip::make_address(options_.bind_proxy_address, ec);
  if (options_.enable_dummy_if && options_.bind_proxy_address != options_.dummy_if_ip &&
      !(!ec && bound.is_unspecified())) {
    if (Status ok = bind_or_defer(DeferredListener::PlainOnDummyIp, inherited); !ok) return ok;
  }

  // Its address defaults to the dummy IP with --enable-dummy-if (options.cc), as YurtHub's.
  if (server_tls_) {
    if (Status ok = bind_or_defer(DeferredListener::Secure, inherited); !ok) return ok;
  } else {
    YH_LOG(Info) << "HTTPS proxy port disabled: no --tls-cert-file/--tls-private-key-file, and no "
                    "serving certificate by CSR (docs/operations.md)";
  }
  bind_multiplexer_listener(inherited);
  return {};
}

void Hub::bind_multiplexer_listener(net::InheritedListeners* inherited) {
  if (!pool_ || !cluster_ca_ || options_.multiplexer_port <= 0) return;
  if (!server_tls_ || options_.node_ip.empty()) {
    YH_LOG(Warning) << "multiplexer port disabled: it needs a serving certificate and --node-ip; "
                       "this hub cannot lead its pool";
    return;
  }
  std::vector<Worker*> all;
  for (auto& w : workers_) all.push_back(w.get());
  auto listener = Listener::bind(workers_[0]->io(), options_.node_ip, options_.multiplexer_port,
                                 "multiplexer", inherited);
  if (!listener) {
    YH_LOG(Error) << listener.error().message << "; this hub cannot lead its pool";
    return;
  }
  (*listener)->start(all, [tls = server_tls_, ca = cluster_ca_](net::TcpSocket s, Worker& w) {
    return start_tls_session(std::move(s), w, tls->get(), ca);
  });
  listeners_.push_back(std::move(*listener));
}

Status Hub::bind_or_defer(DeferredListener which, net::InheritedListeners* inherited) {
  const bool secure = which == DeferredListener::Secure;
  const std::string& address = secure ? options_.bind_proxy_secure_address : options_.dummy_if_ip;
  const int port = secure ? options_.proxy_secure_port : options_.proxy_port;
  boost::system::error_code ec;
  const auto ip = asio::ip::make_address(address, ec);
  // Only an address on the missing dummy interface waits for it; a socket systemd bound for it
  // is taken now (the socket unit binds with FreeBind, before the interface exists).
  const bool waits = dummy_if_ && !dummy_if_->ready() && address == options_.dummy_if_ip &&
                     !(inherited && !ec && inherited->has({ip, static_cast<unsigned short>(port)}));
  if (waits) {
    YH_LOG(Warning) << (secure ? "proxy_secure" : "proxy_dummy") << " on " << address << ":" << port
                    << " waits for dummy interface " << options_.dummy_if_name;
    deferred_.push_back(which);
    return {};
  }
  std::vector<Worker*> all;
  for (auto& w : workers_) all.push_back(w.get());
  auto listener = Listener::bind(workers_[0]->io(), address, port,
                                 secure ? "proxy_secure" : "proxy_dummy", inherited);
  if (!listener) return listener.error();
  if (secure) {
    (*listener)->start(all, [tls = server_tls_](net::TcpSocket s, Worker& w) {
      return start_tls_session(std::move(s), w, tls->get());
    });
  } else {
    (*listener)->start(
        all, [](net::TcpSocket s, Worker& w) { return start_dummy_ip_session(std::move(s), w); });
  }
  listeners_.push_back(std::move(*listener));
  return {};
}

void Hub::bind_deferred_listeners() {
  if (draining_started_) return;
  const std::vector<DeferredListener> deferred = std::move(deferred_);
  deferred_.clear();
  for (DeferredListener which : deferred) {
    if (Status ok = bind_or_defer(which, nullptr); !ok) {
      // The port may be taken meanwhile; the hub keeps serving 127.0.0.1 (logged, not retried).
      YH_LOG(Error) << ok.error().message;
      continue;
    }
    log_listening(*listeners_.back());
  }
}

void Hub::log_listening(const Listener& l) {
  auto ep = l.local_endpoint();
  YH_LOG(Info) << l.name() << " listening on " << ep.address().to_string() << ":" << ep.port()
               << (l.inherited() ? " (socket from systemd)" : "");
}

std::string Hub::readiness_notes() const {
  if (!dummy_if_ || dummy_if_->ready()) return "";
  return "warning: " + dummy_if_->problem() + "; pods cannot reach the hub on " +
         options_.dummy_if_ip + " until the interface exists (tried again, at most every " +
         std::to_string(DummyInterfaceKeeper::kPeriod.count()) + "s); 127.0.0.1 is served";
}

void Hub::set_shared_cache(SharedCacheHooks* pool) { pool_ = pool; }

void Hub::set_filters(FilterHooks* filters, std::function<std::optional<std::string>()> not_ready) {
  filters_ = filters;
  filters_not_ready_ = std::move(not_ready);
}

std::unique_ptr<net::Informer> Hub::make_informer(net::InformerOptions options,
                                                  net::Informer::OnChange on_change) {
  // Through the hub's own proxy port, like any client on the node: what it reads is cached (as
  // component "yurthub") and still known after a restart while offline.
  std::tie(options.proxy_host, options.proxy_port) = proxy_address();
  options.user_agent = std::string("yurthub/") + kVersion;
  return std::make_unique<net::Informer>(workers_[0]->io().get_executor(), std::move(options),
                                         std::move(on_change));
}

std::optional<ServerAddress> Hub::pick_healthy_server() const {
  const std::optional<std::size_t> picked = servers_->pick();
  if (!picked) return std::nullopt;
  return servers_->address(*picked);
}

unsigned short Hub::secure_port() const {
  for (const auto& l : listeners_) {
    if (l->name() == "proxy_secure") return l->local_endpoint().port();
  }
  for (DeferredListener which : deferred_) {
    // Bound once the dummy interface exists, on the port it was given.
    if (which == DeferredListener::Secure)
      return static_cast<unsigned short>(options_.proxy_secure_port);
  }
  return 0;
}

boost::asio::any_io_executor Hub::main_executor() { return workers_[0]->io().get_executor(); }

bool Hub::online() const { return servers_->any_healthy(); }

std::pair<std::string, unsigned short> Hub::proxy_address() const {
  const auto endpoint = listeners_[0]->local_endpoint();
  return {endpoint.address().to_string(), endpoint.port()};
}

void Hub::notify_filters_changed() {
  for (auto& w : workers_) w->post_filters_changed();
}

std::map<std::string, std::string> config_map_data(const net::ObjectMap& objects) {
  std::map<std::string, std::string> data;
  for (const auto& [key, object] : objects) {
    if (!object->IsObject() || !object->HasMember("data") || !(*object)["data"].IsObject())
      continue;
    for (const auto& member : (*object)["data"].GetObject()) {
      // With their lengths: a NUL inside a value (JSON's \u0000) must not end it early.
      if (member.value.IsString()) {
        data[std::string(member.name.GetString(), member.name.GetStringLength())] =
            std::string(member.value.GetString(), member.value.GetStringLength());
      }
    }
  }
  return data;
}

void Hub::start_config_informer() {
  // Selected by name, which works for both YurtHub 1.6 (no label) and 1.7 (labelled) ConfigMaps.
  net::InformerOptions o;
  o.name = "yurt-hub-cfg";
  o.path = "/api/v1/namespaces/" + options_.hub_namespace + "/configmaps";
  o.field_selector = "metadata.name=yurt-hub-cfg";
  config_informer_ = make_informer(o, [this](const net::ObjectSnapshot& snapshot) {
    const std::map<std::string, std::string> data = config_map_data(*snapshot);
    for (const auto& listener : config_listeners_) listener(data);
  });
  config_informer_->start();
}

std::optional<std::string> Hub::not_ready_reason() const {
  std::string reasons;
  auto add = [&](const std::string& reason) { reasons += (reasons.empty() ? "" : "; ") + reason; };
  if (health_ && !health_->initial_probes_done()) {
    add("waiting for the first health probe of every apiserver");
  }
  if (config_informer_ && !config_informer_->synced()) {
    add("waiting for the " + options_.hub_namespace + "/yurt-hub-cfg ConfigMap to be listed");
  }
  if (filters_not_ready_) {
    if (auto reason = filters_not_ready_()) add(*reason);
  }
  for (const auto& check : readiness_checks_) {
    if (auto reason = check()) add(*reason);
  }
  if (reasons.empty()) return std::nullopt;
  return reasons;
}

void Hub::on_server_health(std::size_t server, bool healthy) {
  // Unhealthy: end the streams relayed from this server, so clients re-watch elsewhere or from
  // the cache instead of hanging on a dead connection (YurtHub #2792). Healthy: end the offline
  // watches, so their clients re-watch through the apiserver.
  for (auto& w : workers_) w->post_server_health(server, healthy);
}

int Hub::run() {
  std::signal(SIGPIPE, SIG_IGN);
  asio::io_context& main_io = workers_[0]->io();
  signals_ = std::make_unique<asio::signal_set>(main_io, SIGTERM, SIGINT);
  signals_->async_wait([this](boost::system::error_code ec, int signo) {
    if (!ec) begin_drain(signo == SIGTERM ? "SIGTERM" : "SIGINT");
  });
  for (std::size_t i = 1; i < workers_.size(); ++i) workers_[i]->start_thread();
  workers_[0]->run_here();
  for (std::size_t i = 1; i < workers_.size(); ++i) {
    workers_[i]->stop();
    workers_[i]->join();
  }
  // After the drain, so the connections pods made to the dummy IP could finish. YurtHub deletes
  // the interface when it stops as well.
  if (dummy_if_) dummy_if_->remove();
  YH_LOG(Info) << "yurthub stopped";
  return 0;
}

void Hub::request_stop() {
  asio::post(workers_[0]->io(), [this] { begin_drain("a stop request"); });
}

void Hub::begin_drain(const char* why) {
  if (draining_started_) return;
  draining_started_ = true;
  YH_LOG(Info) << "received " << why << ": draining";
  shared_->draining = true;
  for (auto& l : listeners_) l->close();
  if (dummy_if_) dummy_if_->stop();
  if (health_) health_->stop();
  if (config_informer_) config_informer_->stop();
  if (cache_) cache_->stop_replay();
  if (signals_) signals_->cancel();
  for (auto& w : workers_) w->post_drain();
  drain_timer_ = std::make_unique<net::Timer>(workers_[0]->io());
  wait_for_drain(base::Clock::now() + kDrainTimeout);
}

void Hub::wait_for_drain(std::chrono::steady_clock::time_point deadline) {
  std::size_t open = 0;
  for (auto& w : workers_) open += w->session_count();
  if (open == 0 || base::Clock::now() >= deadline) {
    if (open) YH_LOG(Warning) << open << " connections still open after the drain timeout";
    for (auto& w : workers_) w->stop();
    return;
  }
  drain_timer_->expires_after(std::chrono::milliseconds(50));
  drain_timer_->async_wait([this, deadline](boost::system::error_code ec) {
    if (!ec) wait_for_drain(deadline);
  });
}

}  // namespace yurthub::hub
