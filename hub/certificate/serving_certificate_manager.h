// The serving certificate of the HTTPS proxy port (10268) by CSR, as YurtHub gets it when no
// --tls-cert-file is given, in both bootstrap modes: signer kubernetes.io/kubelet-serving, CN
// system:node:<node>, O system:nodes, SANs the addresses pods use (the dummy interface's, the bind
// addresses, the node's, the default/kubernetes ClusterIP that forwardkubesvctraffic sends to the
// hub) and the kubernetes Service's DNS names, so a pod's service-account ca.crt verifies it.
// Requested as the hub's client identity (the hub's own certificate in token mode, kubelet's in
// kubelet-certificate mode: the kubelet-serving signer is for nodes), stored as
// <root-dir>/pki/yurthub-server-current.pem, renewed like the client certificate and put in use for
// new connections. A certificate that cannot be had at start never stops the hub: the port is
// bound and closes each connection until one is issued, readyz says why, and the request is
// retried in the background. When the client identity changes to another node's, the serving
// certificate is requested again under it. Created by cmd/yurthub.cc; renews on the thread of the
// client certificate's manager (token mode) or of the kubeconfig reloader (kubelet mode).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>

#include "base/metrics.h"
#include "base/result.h"
#include "hub/certificate/certificate_files.h"
#include "hub/options.h"
#include "kube/kubeconfig.h"
#include "net/timer.h"
#include "net/tls.h"

namespace yurthub::hub {

struct ServingCertificateSettings {
  std::filesystem::path root_dir;
  std::string node_name;
  std::vector<ServerAddress> servers;
  std::vector<std::string> ip_addresses;  // subjectAltName IPs
  std::vector<std::string> dns_names;     // subjectAltName DNS names
  std::chrono::milliseconds csr_poll{std::chrono::seconds(1)};
  std::chrono::milliseconds csr_wait{std::chrono::minutes(4)};
  std::chrono::milliseconds retry_max{std::chrono::minutes(1)};
};

// The SANs YurtHub puts in its serving certificate that come from the hub's flags: the dummy IP
// (with --enable-dummy-if), the proxy bind addresses (unless they are 0.0.0.0 or ::), 127.0.0.1,
// --node-ip, and the kubernetes Service's four DNS names. The manager adds the ClusterIP of
// default/kubernetes, read from the apiserver.
ServingCertificateSettings serving_settings(const HubOptions& options);

class ServingCertificateManager {
 public:
  // `identity` returns the hub's client credentials in use, on the thread the renewal runs on.
  using Identity = std::function<std::optional<kube::Credentials>()>;

  ServingCertificateManager(ServingCertificateSettings settings, Identity identity,
                            base::MetricsRegistry& registry);

  // The context to serve with: a stored certificate still valid for the names from the flags and
  // the identity (without asking the apiserver anything), or else one holding no context yet,
  // filled by start() once a certificate is issued. Never null.
  std::shared_ptr<net::ReplaceableContext> obtain();

  // Requests the certificate when there is none, and renews it, on `executor`, into the context
  // obtain() returned. The executor's thread must have stopped before this object goes.
  void start(const boost::asio::any_io_executor& executor);

  // The client identity changed (kubelet rotated its certificate): when the serving certificate
  // names another node than the new identity, a new one is requested at once. On the executor's
  // thread.
  void identity_changed();

  // Why the HTTPS port cannot serve yet (no certificate issued), or nullopt. Thread-safe.
  std::optional<std::string> pending_reason() const;

 private:
  boost::asio::awaitable<Result<std::shared_ptr<boost::asio::ssl::context>>> request_new();
  // TLS to the apiservers with the hub's client identity as it is now.
  Result<net::UpstreamTls> identity_tls() const;
  // Reads default/kubernetes' cluster IPs once (YurtHub reads them once too); until an apiserver
  // answers, every request tries again and the certificate goes without them.
  boost::asio::awaitable<void> learn_cluster_ips(const net::UpstreamTls& tls);
  std::vector<std::string> ip_addresses() const;
  // Once the hub runs: a certificate reused from disk that lacks the ClusterIP (the apiserver did
  // not answer at start, or it was stored by an older hub) is renewed at once.
  boost::asio::awaitable<void> complete_names();
  boost::asio::awaitable<Status> renew();
  boost::asio::awaitable<void> renew_for_new_identity();
  // The certificate's common name: the identity's own when it is a node's (system:node:<name>),
  // else system:node:<--node-name>.
  std::string common_name() const;
  Result<std::shared_ptr<boost::asio::ssl::context>> use(const std::string& certificate_pem,
                                                         const std::string& key_pem);
  bool stored_is_usable(const std::string& pem) const;
  void set_pending(std::string why);

  ServingCertificateSettings settings_;
  Identity identity_;
  CertificateFiles files_;
  base::Gauge& expiry_;
  base::CounterFamily& renewals_;
  std::vector<std::string> cluster_ips_;
  bool cluster_ips_known_ = false;
  std::string current_pem_;
  std::shared_ptr<net::ReplaceableContext> context_;
  std::optional<net::Timer> wake_;
  mutable std::mutex pending_mutex_;
  std::string pending_;  // why no certificate is in use; empty once one is
};

}  // namespace yurthub::hub
