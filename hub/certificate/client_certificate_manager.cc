// The hub's client certificate: bootstrap and renewal; see client_certificate_manager.h.
#include "hub/certificate/client_certificate_manager.h"

#include <random>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include "base/log.h"
#include "hub/certificate/kubeconfig_reloader.h"
#include "kube/certificate_signing_request.h"
#include "net/http_io.h"
#include "net/spawn.h"
#include "net/x509.h"

namespace yurthub::hub {
namespace asio = boost::asio;
using std::chrono::system_clock;

namespace {

// The certificate in `credentials`, if it is the node's and still valid.
std::optional<net::CertificateInfo> usable(const kube::Credentials& credentials,
                                           const std::string& node_name) {
  auto info = net::inspect_certificate(credentials.client_cert_pem);
  if (!info || info->common_name != "system:node:" + node_name) return std::nullopt;
  if (info->not_after <= system_clock::now()) return std::nullopt;
  return *info;
}

std::string utc(system_clock::time_point t) {
  const std::time_t seconds = system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

system_clock::time_point renewal_time(system_clock::time_point not_before,
                                      system_clock::time_point not_after) {
  thread_local std::mt19937_64 random{std::random_device{}()};
  const auto lifetime = not_after - not_before;
  std::uniform_real_distribution<double> fraction(0.7, 0.9);
  return not_before +
         std::chrono::duration_cast<system_clock::duration>(lifetime * fraction(random));
}

ClientCertificateManager::ClientCertificateManager(ClientCertificateSettings settings,
                                                   base::MetricsRegistry& registry)
    : settings_(std::move(settings)),
      files_(settings_.root_dir),
      expiry_(client_certificate_expiry_gauge(registry)),
      renewals_(registry.counter("node_yurthub_client_certificate_renewals_total",
                                 "Attempts to renew the hub's client certificate, by result.",
                                 {"result"})),
      join_token_(settings_.discovery.join_token) {}

ClientCertificateManager::~ClientCertificateManager() { stop(); }

Result<kube::Credentials> ClientCertificateManager::load_current() const {
  auto loaded = kube::load_kubeconfig(files_.kubeconfig().string());
  if (!loaded) return loaded.error();
  if (!usable(*loaded, settings_.node_name)) {
    return make_error(ErrorCode::NotFound, "the certificate in " + files_.kubeconfig().string() +
                                               " has expired or is not for this node");
  }
  return loaded;
}

Result<kube::Credentials> ClientCertificateManager::obtain() {
  if (auto current = load_current()) {
    publish(*current);
    YH_LOG(Info) << "using the client certificate in " << files_.current_pem().string();
    return current;
  } else {
    YH_LOG(Info) << current.error().message << "; requesting a new one";
  }
  std::optional<Result<kube::Credentials>> result;
  asio::io_context local;
  asio::co_spawn(
      local, [&]() -> asio::awaitable<void> { result.emplace(co_await obtain_with_retries()); },
      asio::detached);
  local.run();
  if (!result) return make_error("the certificate request ended without an answer");
  if (*result) publish(**result);
  return std::move(*result);
}

void ClientCertificateManager::start(std::shared_ptr<net::ReplaceableContext> context) {
  context_ = std::move(context);
  net::spawn_detached(io_.get_executor(), renew_forever(), "client certificate renewal");
  thread_ = std::thread([this] { io_.run(); });
}

void ClientCertificateManager::stop() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

Status ClientCertificateManager::update_join_token(const std::string& token) {
  if (auto parsed = kube::parse_bootstrap_token(token); !parsed) return parsed.error();
  {
    std::lock_guard lock(mutex_);
    join_token_ = token;
    token_posted_ = true;
  }
  YH_LOG(Info) << "a new join token was posted to /v1/token";
  asio::post(io_, [this] { wake_.cancel(); });
  return {};
}

asio::awaitable<Result<kube::Credentials>> ClientCertificateManager::bootstrap_credentials(
    const ServerAddress& server) {
  std::string token;
  bool posted = false;
  {
    std::lock_guard lock(mutex_);
    token = join_token_;
    posted = token_posted_;
  }
  if (!posted && !settings_.bootstrap_file.empty()) {
    co_return kube::load_kubeconfig(settings_.bootstrap_file);
  }
  if (token.empty()) {
    co_return make_error(ErrorCode::NotFound,
                         "no bootstrap credentials: set --bootstrap-file or "
                         "--join-token, or POST a token to /v1/token");
  }
  if (auto saved = kube::load_kubeconfig(files_.bootstrap_kubeconfig().string());
      saved && saved->token == token) {
    co_return saved;
  }
  DiscoverySettings discovery = settings_.discovery;
  discovery.join_token = token;
  const auto executor = co_await asio::this_coro::executor;
  auto cluster = co_await discover_cluster(executor, server, discovery);
  if (!cluster) co_return cluster.error();
  if (Status s = files_.save_ca(cluster->ca_pem); !s) co_return s.error();
  if (Status s = files_.save_bootstrap_kubeconfig(server.url, token); !s) co_return s.error();
  co_return kube::load_kubeconfig(files_.bootstrap_kubeconfig().string());
}

asio::awaitable<Result<IssuedCertificate>> ClientCertificateManager::request(
    const ServerAddress& server, const kube::Credentials& identity) {
  auto tls = net::make_upstream_tls(identity);
  if (!tls) co_return tls.error();
  CertificateOrder order;
  order.subject.common_name = "system:node:" + settings_.node_name;
  order.subject.organizations = {"system:nodes", "openyurt:yurthub"};
  for (const auto& org : settings_.extra_organizations) order.subject.organizations.push_back(org);
  order.signer_name = std::string(kube::kClientSigner);
  order.usages = {"digital signature", "key encipherment", "client auth"};
  order.poll = settings_.csr_poll;
  order.wait = settings_.csr_wait;
  const auto executor = co_await asio::this_coro::executor;
  auto issued = co_await request_certificate(executor, server, *tls, order);
  co_return issued;
}

// As YurtHub at start: tries again every 5 s (or csr_poll, if shorter) for up to csr_wait, unless
// trying again cannot help (a pin that does not match, a malformed token, a denied CSR).
asio::awaitable<Result<kube::Credentials>> ClientCertificateManager::obtain_with_retries() {
  const auto deadline = std::chrono::steady_clock::now() + settings_.csr_wait;
  const auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor);
  for (;;) {
    auto obtained = co_await obtain_new(false);
    if (obtained || obtained.error().code == ErrorCode::InvalidArgument ||
        std::chrono::steady_clock::now() >= deadline) {
      co_return obtained;
    }
    YH_LOG(Warning) << "cannot get a client certificate yet: " << obtained.error().message;
    timer.expires_after(
        std::min<std::chrono::milliseconds>(settings_.csr_poll * 5, std::chrono::seconds(5)));
    co_await timer.async_wait(net::kNoThrow);
  }
}

asio::awaitable<Result<kube::Credentials>> ClientCertificateManager::obtain_new(bool try_current) {
  Error last = make_error(ErrorCode::NotFound, "no --server-addr to request a certificate from");
  for (const auto& server : settings_.servers) {
    if (try_current && current_ && usable(*current_, settings_.node_name)) {
      const kube::Credentials identity = *current_;
      auto issued = co_await request(server, identity);
      if (issued) co_return save(*issued, identity.ca_pem, server);
      last = issued.error();
      YH_LOG(Warning) << "renewing with the current certificate: " << last.message;
      if (last.code != ErrorCode::PermissionDenied) continue;
    }
    auto bootstrap = co_await bootstrap_credentials(server);
    if (!bootstrap) {
      last = bootstrap.error();
      continue;
    }
    const kube::Credentials identity = *bootstrap;
    auto issued = co_await request(server, identity);
    if (issued) co_return save(*issued, identity.ca_pem, server);
    last = issued.error();
  }
  co_return last;
}

Result<kube::Credentials> ClientCertificateManager::save(const IssuedCertificate& issued,
                                                         const std::string& ca_pem,
                                                         const ServerAddress& server) {
  if (Status s = files_.save_pair(issued.certificate_pem, issued.key_pem); !s) return s.error();
  if (Status s = files_.save_ca(ca_pem); !s) return s.error();
  if (Status s = files_.save_kubeconfig(server.url); !s) return s.error();
  return kube::load_kubeconfig(files_.kubeconfig().string());
}

void ClientCertificateManager::publish(const kube::Credentials& credentials) {
  current_ = credentials;
  set_certificate_expiry(expiry_, credentials);
  if (auto info = net::inspect_certificate(credentials.client_cert_pem)) {
    YH_LOG(Info) << "client certificate for " << info->common_name << " valid until "
                 << utc(info->not_after);
  }
  if (!context_) return;
  auto context = net::make_client_context(credentials);
  if (!context) {
    YH_LOG(Error) << "cannot use the renewed certificate: " << context.error().message;
    return;
  }
  context_->replace(std::move(*context));
}

asio::awaitable<void> ClientCertificateManager::renew_forever() {
  bool renewed_here = false;
  for (;;) {
    auto info = net::inspect_certificate(current_ ? current_->client_cert_pem : "");
    auto when = system_clock::now();
    if (info) {
      when = renewal_time(info->not_before, info->not_after);
      // Right after a renewal, never sooner than half the new certificate's remaining validity:
      // a signer backdates notBefore by five minutes, which puts a short certificate's 70-90 %
      // point in the past at once, and the hub would renew in a loop. (A certificate found past
      // that point at start is renewed at once, as client-go does.)
      const auto now = system_clock::now();
      if (renewed_here) when = std::max(when, now + (info->not_after - now) / 2);
    }
    YH_LOG(Info) << "client certificate renewal at " << utc(when);
    // Waits in steps of at most a minute, so a wall clock that jumps is noticed.
    while (system_clock::now() < when) {
      wake_.expires_after(
          std::min<std::chrono::nanoseconds>(when - system_clock::now(), std::chrono::minutes(1)));
      co_await wake_.async_wait(net::kNoThrow);
    }
    std::chrono::milliseconds backoff{std::chrono::seconds(1)};
    for (;;) {
      auto renewed = co_await obtain_new(true);
      if (renewed) {
        renewals_.with({"success"}).inc();
        publish(*renewed);
        renewed_here = true;
        break;
      }
      renewals_.with({"failure"}).inc();
      YH_LOG(Warning) << "cannot renew the client certificate (retry in " << backoff.count()
                      << " ms): " << renewed.error().message;
      wake_.expires_after(backoff);
      co_await wake_.async_wait(net::kNoThrow);  // a token posted to /v1/token wakes it early
      backoff = std::min(backoff * 2, settings_.retry_max);
    }
  }
}

}  // namespace yurthub::hub
