// Re-reading a kubeconfig renewed by someone else; see kubeconfig_reloader.h.
#include "hub/certificate/kubeconfig_reloader.h"
#include "net/files.h"

#include "base/log.h"
#include "base/thread_name.h"
#include "net/http_io.h"
#include "net/spawn.h"
#include "net/x509.h"

namespace yurthub::hub {

base::Gauge& client_certificate_expiry_gauge(base::MetricsRegistry& registry) {
  return registry
      .gauge("node_yurthub_client_certificate_expiry_timestamp_seconds",
             "When the hub's client certificate expires (Unix time).", {})
      .with({});
}

void set_certificate_expiry(base::Gauge& gauge, const kube::Credentials& credentials) {
  if (!credentials.has_client_certificate()) return;
  auto info = net::inspect_certificate(credentials.client_cert_pem);
  if (info) set_expiry(gauge, info->not_after);
}

void set_expiry(base::Gauge& gauge, std::chrono::system_clock::time_point not_after) {
  gauge.set(std::chrono::duration_cast<std::chrono::seconds>(not_after.time_since_epoch()).count());
}

KubeconfigReloader::KubeconfigReloader(std::string path, kube::Credentials loaded,
                                       std::shared_ptr<net::ReplaceableContext> context,
                                       std::shared_ptr<net::ReplaceableToken> token,
                                       base::MetricsRegistry& registry,
                                       std::chrono::milliseconds period)
    : path_(std::move(path)),
      current_(std::move(loaded)),
      context_(std::move(context)),
      token_(std::move(token)),
      expiry_(client_certificate_expiry_gauge(registry)),
      period_(period) {
  set_certificate_expiry(expiry_, current_);
}

void KubeconfigReloader::start() {
  net::spawn_detached(io_.get_executor(), follow(), "kubeconfig reload");
  thread_ = std::thread([this] {
    base::name_this_thread("yh-kubeconfig");
    io_.run();
  });
}

KubeconfigReloader::~KubeconfigReloader() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

namespace {

// The token the hub sends: none when the kubeconfig has a certificate (net::make_upstream_tls).
std::string hub_token(const kube::Credentials& credentials) {
  return credentials.has_client_certificate() ? std::string() : credentials.token;
}

}  // namespace

bool KubeconfigReloader::reload_once() {
  auto loaded = net::load_kubeconfig(path_);
  if (!loaded) {
    YH_LOG(Warning) << "keeping the current credentials: " << loaded.error().message;
    return false;
  }
  const bool certificate_changed = loaded->client_cert_pem != current_.client_cert_pem ||
                                   loaded->client_key_pem != current_.client_key_pem ||
                                   loaded->ca_pem != current_.ca_pem;
  const bool token_changed = hub_token(*loaded) != hub_token(current_);
  if (!certificate_changed && !token_changed) return false;
  if (certificate_changed) {
    auto context = net::make_client_context(*loaded);
    if (!context) {
      YH_LOG(Warning) << "keeping the current credentials: " << context.error().message;
      return false;
    }
    context_->replace(std::move(*context));
    YH_LOG(Info) << "the client certificate in " << path_ << " changed; new connections use it";
  }
  if (token_changed && token_) {
    token_->replace(std::make_shared<const std::string>(hub_token(*loaded)));
    YH_LOG(Info) << "the token in " << path_ << " changed; the next requests send it";
  }
  current_ = std::move(*loaded);
  set_certificate_expiry(expiry_, current_);
  for (const auto& listener : listeners_) listener();
  return true;
}

boost::asio::awaitable<void> KubeconfigReloader::follow() {
  net::Timer timer(co_await boost::asio::this_coro::executor);
  for (;;) {
    timer.expires_after(period_);
    co_await timer.async_wait(net::kNoThrow);
    reload_once();
  }
}

}  // namespace yurthub::hub
