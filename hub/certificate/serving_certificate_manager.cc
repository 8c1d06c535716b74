// The HTTPS port's serving certificate by CSR; see serving_certificate_manager.h.
#include "hub/certificate/serving_certificate_manager.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>

#include "base/clock.h"
#include "base/log.h"
#include "hub/certificate/api_call.h"
#include "hub/certificate/csr_client.h"
#include "hub/certificate/kubeconfig_reloader.h"
#include "hub/certificate/renewal.h"
#include "kube/certificate_signing_request.h"
#include "net/spawn.h"
#include "net/x509.h"

namespace yurthub::hub {
namespace asio = boost::asio;
using SslContext = std::shared_ptr<asio::ssl::context>;

namespace {

// `text` as an IP in canonical form, or "" for a name, an unspecified address or garbage.
std::string canonical_ip(const std::string& text) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(text, ec);
  if (ec || address.is_unspecified()) return {};
  return address.to_string();
}

void add_unique(std::vector<std::string>& ips, const std::string& candidate) {
  const std::string ip = canonical_ip(candidate);
  if (!ip.empty() && std::find(ips.begin(), ips.end(), ip) == ips.end()) ips.push_back(ip);
}

bool contains_all(const std::vector<std::string>& have, const std::vector<std::string>& want) {
  return std::all_of(want.begin(), want.end(), [&](const std::string& w) {
    return std::find(have.begin(), have.end(), w) != have.end();
  });
}

}  // namespace

ServingCertificateSettings serving_settings(const HubOptions& o) {
  ServingCertificateSettings s;
  s.root_dir = o.root_dir;
  s.node_name = o.node_name;
  s.servers = o.servers;
  std::vector<std::string> candidates = {o.bind_proxy_secure_address, o.bind_proxy_address,
                                         "127.0.0.1", o.node_ip};
  if (o.enable_dummy_if) candidates.insert(candidates.begin(), o.dummy_if_ip);
  for (const auto& candidate : candidates) add_unique(s.ip_addresses, candidate);
  s.dns_names = {"kubernetes", "kubernetes.default", "kubernetes.default.svc",
                 "kubernetes.default.svc.cluster.local"};
  return s;
}

ServingCertificateManager::ServingCertificateManager(ServingCertificateSettings settings,
                                                     Identity identity,
                                                     base::MetricsRegistry& registry)
    : settings_(std::move(settings)),
      identity_(std::move(identity)),
      files_(settings_.root_dir),
      expiry_(registry
                  .gauge("node_yurthub_server_certificate_expiry_timestamp_seconds",
                         "When the HTTPS port's serving certificate expires (Unix time).", {})
                  .with({})),
      renewals_(registry.counter("node_yurthub_server_certificate_renewals_total",
                                 "Attempts to renew the HTTPS port's serving certificate.",
                                 {"result"})) {}

std::string ServingCertificateManager::common_name() const {
  constexpr std::string_view kNodePrefix = "system:node:";
  if (const auto identity = identity_(); identity && identity->has_client_certificate()) {
    auto info = net::inspect_certificate(identity->client_cert_pem);
    if (info && info->common_name.size() > kNodePrefix.size() &&
        info->common_name.starts_with(kNodePrefix)) {
      return info->common_name;
    }
  }
  return std::string(kNodePrefix) + settings_.node_name;
}

void ServingCertificateManager::set_pending(std::string why) {
  std::lock_guard lock(pending_mutex_);
  pending_ = std::move(why);
}

std::optional<std::string> ServingCertificateManager::pending_reason() const {
  std::lock_guard lock(pending_mutex_);
  if (pending_.empty()) return std::nullopt;
  return pending_;
}

bool ServingCertificateManager::stored_is_usable(const std::string& pem) const {
  auto info = net::inspect_certificate(pem);
  return info && info->common_name == common_name() && info->not_after > base::WallClock::now() &&
         contains_all(info->ip_addresses, ip_addresses()) &&
         contains_all(info->dns_names, settings_.dns_names);
}

Result<SslContext> ServingCertificateManager::use(const std::string& certificate_pem,
                                                  const std::string& key_pem) {
  auto context = net::make_server_tls_from_pem(certificate_pem, key_pem);
  if (!context) return context.error();
  current_pem_ = certificate_pem;
  set_pending("");
  if (auto info = net::inspect_certificate(certificate_pem)) {
    set_expiry(expiry_, info->not_after);
    YH_LOG(Info) << "serving certificate of the HTTPS port valid until "
                 << utc_text(info->not_after);
  }
  return context;
}

std::vector<std::string> ServingCertificateManager::ip_addresses() const {
  std::vector<std::string> ips = settings_.ip_addresses;
  for (const auto& ip : cluster_ips_) add_unique(ips, ip);
  return ips;
}

std::shared_ptr<net::ReplaceableContext> ServingCertificateManager::obtain() {
  // A stored certificate is used without asking the apiserver anything: a node restarting offline
  // must not wait for it. complete_names() checks the ClusterIP once the hub runs.
  std::ifstream in(files_.current_pem(Pair::Serving));
  const std::string stored((std::istreambuf_iterator<char>(in)), {});
  if (!stored.empty() && stored_is_usable(stored)) {
    if (auto context = use(stored, stored)) {
      context_ = std::make_shared<net::ReplaceableContext>(std::move(*context));
      return context_;
    }
  }
  // No wait at start: kubelet needs the plain port now, and an unapproved CSR can take forever.
  set_pending("the HTTPS port's serving certificate (signer kubernetes.io/kubelet-serving, " +
              common_name() + ") is not issued yet");
  YH_LOG(Info) << "the HTTPS port closes its connections until its serving certificate is "
                  "issued; requesting one";
  context_ = std::make_shared<net::ReplaceableContext>(nullptr);
  return context_;
}

asio::awaitable<void> ServingCertificateManager::learn_cluster_ips(const net::UpstreamTls& tls) {
  if (cluster_ips_known_) co_return;
  const auto executor = co_await asio::this_coro::executor;
  for (const auto& server : settings_.servers) {
    ApiCall call{
        boost::beast::http::verb::get, "/api/v1/namespaces/default/services/kubernetes", {}};
    auto answer =
        co_await api_call(executor, server, tls, std::move(call), std::chrono::seconds(5));
    if (!answer || answer->status != 200) continue;
    auto ips = kube::parse_service_cluster_ips(answer->body);
    if (!ips) {
      YH_LOG(Warning) << "default/kubernetes from " << server.url << ": " << ips.error().message;
      continue;
    }
    cluster_ips_ = std::move(*ips);
    cluster_ips_known_ = true;
    co_return;
  }
  YH_LOG(Warning) << "the serving certificate goes without the kubernetes ClusterIP: no apiserver "
                     "answered for default/kubernetes";
}

Result<net::UpstreamTls> ServingCertificateManager::identity_tls() const {
  const auto identity = identity_();
  if (!identity) return make_error(ErrorCode::NotFound, "the hub has no client identity yet");
  return net::make_upstream_tls(*identity);
}

asio::awaitable<Result<SslContext>> ServingCertificateManager::request_new() {
  auto tls = identity_tls();
  if (!tls) co_return tls.error();
  co_await learn_cluster_ips(*tls);
  CertificateOrder order;
  order.subject = {common_name(), {"system:nodes"}, settings_.dns_names, ip_addresses()};
  order.signer_name = std::string(kube::kServingSigner);
  order.usages = {"digital signature", "key encipherment", "server auth"};
  order.poll = settings_.csr_poll;
  order.wait = settings_.csr_wait;
  const auto executor = co_await asio::this_coro::executor;
  Error last = make_error(ErrorCode::NotFound, "no --server-addr to request a certificate from");
  for (const auto& server : settings_.servers) {
    auto issued = co_await request_certificate(executor, server, *tls, order);
    if (!issued) {
      last = issued.error();
      continue;
    }
    if (Status s = files_.save_pair(issued->certificate_pem, issued->key_pem, Pair::Serving); !s) {
      co_return s.error();
    }
    co_return use(issued->certificate_pem, issued->key_pem);
  }
  co_return last;
}

asio::awaitable<Status> ServingCertificateManager::renew() {
  auto context = co_await request_new();
  if (!context) {
    if (current_pem_.empty()) {
      set_pending("the HTTPS port's serving certificate is not issued yet: " +
                  context.error().message);
    }
    co_return context.error();
  }
  context_->replace(std::move(*context));
  co_return Status{};
}

void ServingCertificateManager::identity_changed() {
  if (!wake_) return;  // not started
  if (current_pem_.empty()) {
    if (wake_) wake_->cancel();  // a request waiting in its backoff tries the new identity now
    return;
  }
  auto info = net::inspect_certificate(current_pem_);
  const std::string wanted = common_name();
  if (info && info->common_name == wanted) return;
  YH_LOG(Info) << "the client identity is now " << wanted
               << "; requesting a serving certificate under it";
  net::spawn_detached(wake_->get_executor(), renew_for_new_identity(),
                      "serving certificate for a new identity");
}

asio::awaitable<void> ServingCertificateManager::renew_for_new_identity() {
  const Status renewed = co_await renew();
  renewals_.with({renewed ? "success" : "failure"}).inc();
  if (!renewed) {
    YH_LOG(Warning) << "the serving certificate under the new identity: " << renewed.error().message
                    << "; the scheduled renewal tries again";
  }
}

asio::awaitable<void> ServingCertificateManager::complete_names() {
  if (current_pem_.empty()) co_return;  // the first request learns the ClusterIP itself
  if (!cluster_ips_known_) {
    auto tls = identity_tls();
    if (!tls) co_return;
    co_await learn_cluster_ips(*tls);
  }
  if (!cluster_ips_known_ || stored_is_usable(current_pem_)) co_return;
  YH_LOG(Info) << "the serving certificate does not name the kubernetes ClusterIP; renewing it";
  const Status renewed = co_await renew();
  renewals_.with({renewed ? "success" : "failure"}).inc();
  if (!renewed) {
    YH_LOG(Warning) << "renewing the serving certificate for the ClusterIP: "
                    << renewed.error().message << "; the scheduled renewal will add it";
  }
}

void ServingCertificateManager::start(const asio::any_io_executor& executor) {
  wake_.emplace(executor);
  Renewal renewal{"serving certificate", [this] { return current_pem_; },
                  [this] { return renew(); }, &renewals_, settings_.retry_max};
  net::spawn_detached(executor, renew_forever(*wake_, std::move(renewal)),
                      "serving certificate renewal");
  net::spawn_detached(executor, complete_names(), "serving certificate names");
}

}  // namespace yurthub::hub
