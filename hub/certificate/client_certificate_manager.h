// The hub's own client certificate in --bootstrap-mode=token, as YurtHub keeps it: at start, a
// certificate still valid under --root-dir is used; otherwise a new one is requested by CSR
// (signer kubernetes.io/kube-apiserver-client, CN system:node:<node>, O system:nodes,
// openyurt:yurthub and --hub-cert-organizations) with the bootstrap credentials (--bootstrap-file,
// or --join-token through cluster-info discovery). While the hub runs, the certificate is renewed
// at a jittered 70-90 % of its lifetime, as client-go's certificate manager does: the new one is
// written to disk and replaces the TLS context used for new connections; open watches keep theirs.
// When renewal with the current certificate is refused (it expired offline), the bootstrap
// credentials are used; when those are refused too, a new join token posted to /v1/token is.
// Created by cmd/yurthub.cc; obtain() runs before the hub starts, start() after; the renewal runs
// on its own thread.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include "base/clock.h"
#include "base/metrics.h"
#include "base/result.h"
#include "hub/certificate/certificate_files.h"
#include "hub/certificate/cluster_discovery.h"
#include "hub/certificate/csr_client.h"
#include "hub/options.h"
#include "kube/kubeconfig.h"
#include "net/timer.h"
#include "net/tls.h"

namespace yurthub::hub {

struct ClientCertificateSettings {
  std::filesystem::path root_dir;
  std::string node_name;
  std::vector<std::string> extra_organizations;  // --hub-cert-organizations
  std::string bootstrap_file;                    // --bootstrap-file
  DiscoverySettings discovery;                   // --join-token and its CA pins
  std::vector<ServerAddress> servers;            // --server-addr, tried in order
  std::chrono::milliseconds csr_poll{std::chrono::seconds(1)};
  std::chrono::milliseconds csr_wait{std::chrono::minutes(4)};
  std::chrono::milliseconds retry_max{std::chrono::minutes(1)};  // backoff cap after a failure
  // POST /v1/token: at most one token accepted per interval (each wakes the renewal).
  std::chrono::seconds token_post_interval{10};
};

class ClientCertificateManager {
 public:
  ClientCertificateManager(ClientCertificateSettings settings, base::MetricsRegistry& registry);
  ~ClientCertificateManager();

  // The credentials to start with, from disk or a new CSR; blocks up to csr_wait per server.
  Result<kube::Credentials> obtain();

  // Starts renewing into `context` (the hub's ReplaceableContext) on the manager's own thread.
  void start(std::shared_ptr<net::ReplaceableContext> context);
  // The manager's thread: the serving certificate's renewal runs there too.
  boost::asio::any_io_executor executor() { return io_.get_executor(); }
  // The client identity in use. On executor()'s thread, or before start().
  const std::optional<kube::Credentials>& current() const { return current_; }
  void stop();

  // POST /v1/token: a candidate join token for the next bootstrap, adopted once cluster
  // discovery with it succeeds (until then the credentials in force stay so). Wakes a renewal
  // that is waiting for one. Errors for a token that is not of the bootstrap form, and
  // (ResourceExhausted) for a post within token_post_interval of the last one accepted.
  Status update_join_token(const std::string& token);

 private:
  boost::asio::awaitable<Result<kube::Credentials>> obtain_new(bool try_current);
  boost::asio::awaitable<Result<kube::Credentials>> bootstrap_credentials(
      const ServerAddress& server);
  // Bootstrap credentials from cluster discovery with join token `token` (or the saved ones, if
  // made with that token).
  boost::asio::awaitable<Result<kube::Credentials>> discover_with(const ServerAddress& server,
                                                                  const std::string& token);
  boost::asio::awaitable<Result<IssuedCertificate>> request(const ServerAddress& server,
                                                            const kube::Credentials& identity);
  boost::asio::awaitable<Status> renew();
  Result<kube::Credentials> save(const IssuedCertificate& issued, const std::string& ca_pem,
                                 const ServerAddress& server);
  Result<kube::Credentials> load_current() const;
  void forget_another_clusters_files() const;
  void publish(const kube::Credentials& credentials);

  ClientCertificateSettings settings_;
  CertificateFiles files_;
  base::Gauge& expiry_;
  base::CounterFamily& renewals_;
  std::mutex mutex_;  // guards join_token_, token_posted_, posted_candidate_ and last_post_
  std::string join_token_;
  bool token_posted_ = false;     // join_token_ came from /v1/token: it wins over --bootstrap-file
  std::string posted_candidate_;  // posted, not yet verified by discovery
  std::optional<base::Clock::time_point> last_post_;
  std::optional<kube::Credentials> current_;
  std::shared_ptr<net::ReplaceableContext> context_;
  boost::asio::io_context io_;
  net::Timer wake_{io_};
  std::thread thread_;
};

}  // namespace yurthub::hub
