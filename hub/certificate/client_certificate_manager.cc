// The hub's client certificate: bootstrap and renewal; see client_certificate_manager.h.
#include "hub/certificate/client_certificate_manager.h"
#include "net/files.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include "base/clock.h"
#include "base/log.h"
#include "base/thread_name.h"
#include "hub/certificate/kubeconfig_reloader.h"
#include "hub/certificate/renewal.h"
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
  if (info->not_after <= base::WallClock::now()) return std::nullopt;
  return *info;
}

}  // namespace

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
  auto loaded = net::load_kubeconfig(files_.kubeconfig().string());
  if (!loaded) return loaded.error();
  if (!usable(*loaded, settings_.node_name)) {
    return make_error(ErrorCode::NotFound, "the certificate in " + files_.kubeconfig().string() +
                                               " has expired or is not for this node");
  }
  return loaded;
}

// YurtHub's verifyServerAddrOrCleanup: a yurthub.conf for a server that is not among --server-addr
// holds another cluster's CA and certificate, which this one would refuse; they are forgotten.
void ClientCertificateManager::forget_another_clusters_files() const {
  auto kept = net::load_kubeconfig(files_.kubeconfig().string());
  if (!kept) return;
  auto server = parse_server_address(kept->server);
  for (const auto& configured : settings_.servers) {
    if (server && server->host == configured.host && server->port == configured.port) return;
  }
  YH_LOG(Warning) << files_.kubeconfig().string() << " is for " << kept->server
                  << ", which is not a --server-addr: forgetting its certificates";
  if (Status s = files_.forget(settings_.bootstrap_file); !s) YH_LOG(Error) << s.error().message;
}

Result<kube::Credentials> ClientCertificateManager::obtain() {
  forget_another_clusters_files();
  if (auto current = load_current()) {
    publish(*current);
    YH_LOG(Info) << "using the client certificate in " << files_.current_pem().string();
    return current;
  } else {
    YH_LOG(Info) << current.error().message << "; requesting a new one";
  }
  auto result = run_at_start<Result<kube::Credentials>>([this] {
    return retry_at_start<kube::Credentials>([this] { return obtain_new(false); },
                                             settings_.csr_wait, "client certificate");
  });
  if (!result) return make_error("the certificate request ended without an answer");
  if (*result) publish(**result);
  return std::move(*result);
}

void ClientCertificateManager::start(std::shared_ptr<net::ReplaceableContext> context) {
  context_ = std::move(context);
  Renewal renewal{"client certificate",
                  [this] { return current_ ? current_->client_cert_pem : std::string(); },
                  [this] { return renew(); }, &renewals_, settings_.retry_max};
  net::spawn_detached(io_.get_executor(), renew_forever(wake_, std::move(renewal)),
                      "client certificate renewal");
  thread_ = std::thread([this] {
    base::name_this_thread("yh-certificates");
    io_.run();
  });
}

void ClientCertificateManager::stop() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

Status ClientCertificateManager::update_join_token(const std::string& token) {
  if (auto parsed = kube::parse_bootstrap_token(token); !parsed) return parsed.error();
  const auto now = base::Clock::now();
  {
    std::lock_guard lock(mutex_);
    if (last_post_ && now - *last_post_ < settings_.token_post_interval) {
      const auto wait = std::chrono::ceil<std::chrono::seconds>(settings_.token_post_interval -
                                                                (now - *last_post_));
      return make_error(ErrorCode::ResourceExhausted,
                        "a join token was posted less than " +
                            std::to_string(settings_.token_post_interval.count()) +
                            " s ago; post again in " + std::to_string(wait.count()) + " s");
    }
    last_post_ = now;
    posted_candidate_ = token;
  }
  YH_LOG(Info) << "a new join token was posted to /v1/token; it is used once cluster discovery "
                  "with it succeeds";
  asio::post(io_, [this] { wake_.cancel(); });
  return {};
}

asio::awaitable<Result<kube::Credentials>> ClientCertificateManager::discover_with(
    const ServerAddress& server, const std::string& token) {
  if (auto saved = net::load_kubeconfig(files_.bootstrap_kubeconfig().string());
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
  co_return net::load_kubeconfig(files_.bootstrap_kubeconfig().string());
}

asio::awaitable<Result<kube::Credentials>> ClientCertificateManager::bootstrap_credentials(
    const ServerAddress& server) {
  std::string candidate;
  {
    std::lock_guard lock(mutex_);
    candidate = posted_candidate_;
  }
  // A posted token is adopted only once discovery with it succeeds; until then, and for good
  // when the cluster refuses it, what was in force stays so (--bootstrap-file, --join-token, an
  // earlier posted token): a bad post can never cut the node off.
  if (!candidate.empty()) {
    auto discovered = co_await discover_with(server, candidate);
    std::lock_guard lock(mutex_);
    if (discovered) {
      if (posted_candidate_ == candidate) posted_candidate_.clear();
      join_token_ = candidate;
      token_posted_ = true;
      YH_LOG(Info) << "the posted join token was verified by cluster discovery and is now in use";
      co_return discovered;
    }
    const bool refused = discovered.error().code != ErrorCode::Unavailable;
    if (refused && posted_candidate_ == candidate) posted_candidate_.clear();
    YH_LOG(Warning) << "the posted join token cannot be used (" << discovered.error().message
                    << "); " << (refused ? "it is dropped" : "it is tried again later")
                    << ", and the credentials in force before it are used";
  }
  std::string token;
  bool posted = false;
  {
    std::lock_guard lock(mutex_);
    token = join_token_;
    posted = token_posted_;
  }
  if (!posted && !settings_.bootstrap_file.empty()) {
    co_return net::load_kubeconfig(settings_.bootstrap_file);
  }
  if (token.empty()) {
    co_return make_error(ErrorCode::NotFound,
                         "no bootstrap credentials: set --bootstrap-file or "
                         "--join-token, or POST a token to /v1/token");
  }
  co_return co_await discover_with(server, token);
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
  return net::load_kubeconfig(files_.kubeconfig().string());
}

void ClientCertificateManager::publish(const kube::Credentials& credentials) {
  current_ = credentials;
  if (auto info = net::inspect_certificate(credentials.client_cert_pem)) {
    set_expiry(expiry_, info->not_after);
    YH_LOG(Info) << "client certificate for " << info->common_name << " valid until "
                 << utc_text(info->not_after);
  }
  if (!context_) return;
  auto context = net::make_client_context(credentials);
  if (!context) {
    YH_LOG(Error) << "cannot use the renewed certificate: " << context.error().message;
    return;
  }
  context_->replace(std::move(*context));
}

asio::awaitable<Status> ClientCertificateManager::renew() {
  auto renewed = co_await obtain_new(true);
  if (!renewed) co_return renewed.error();
  publish(*renewed);
  co_return Status{};
}

}  // namespace yurthub::hub
