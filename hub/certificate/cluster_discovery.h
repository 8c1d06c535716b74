// kubeadm's token discovery, as YurtHub does it for --join-token: read the kube-public/cluster-info
// ConfigMap without trusting the server yet, check its kubeconfig against the token's JWS
// signature (so only someone holding the token can have written it), check the CA it names
// against --discovery-token-ca-cert-hash, then read it again trusting that CA and require the
// same answer. Called by ClientCertificateManager when there is no bootstrap kubeconfig yet.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "base/result.h"
#include "hub/options.h"
#include "kube/kubeconfig.h"

namespace yurthub::hub {

struct DiscoverySettings {
  std::string join_token;
  std::vector<std::string> ca_cert_hashes;  // "sha256:<hex>"
  bool unsafe_skip_ca_verification = false;
  std::chrono::milliseconds timeout{std::chrono::seconds(10)};
};

// The cluster CA (and the server cluster-info names) learnt from `server`.
boost::asio::awaitable<Result<kube::Credentials>> discover_cluster(
    boost::asio::any_io_executor executor, const ServerAddress& server,
    const DiscoverySettings& settings);

// True when `jws` is the detached HS256 signature of `content` by `token` ("<id>.<secret>"):
// keyed by the secret, with the id as the header's kid.
bool cluster_info_signed_by(std::string_view jws, std::string_view content, std::string_view token);

}  // namespace yurthub::hub
