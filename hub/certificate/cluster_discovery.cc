// Token discovery through cluster-info; see cluster_discovery.h.
#include "hub/certificate/cluster_discovery.h"

#include <algorithm>

#include "hub/certificate/api_call.h"
#include "kube/certificate_signing_request.h"
#include "net/tls.h"
#include "net/x509.h"

namespace yurthub::hub {
namespace {

constexpr const char* kClusterInfoPath = "/api/v1/namespaces/kube-public/configmaps/cluster-info";

// The cluster-info ConfigMap's body, read anonymously over `credentials`' TLS settings.
boost::asio::awaitable<Result<std::string>> read_cluster_info(boost::asio::any_io_executor executor,
                                                              const ServerAddress& server,
                                                              const kube::Credentials& credentials,
                                                              std::chrono::milliseconds timeout) {
  auto tls = net::make_upstream_tls(credentials);
  if (!tls) co_return tls.error();
  // Named, not a temporary in the co_await: g++ 12 frees such temporaries twice.
  ApiCall call{boost::beast::http::verb::get, kClusterInfoPath, {}};
  auto answer = co_await api_call(executor, server, *tls, std::move(call), timeout);
  if (!answer) co_return answer.error();
  if (answer->status != 200) {
    co_return make_error(ErrorCode::Unavailable, "reading kube-public/cluster-info from " +
                                                     server.url + ": HTTP " +
                                                     std::to_string(answer->status));
  }
  co_return std::move(answer->body);
}

// The CA named by a verified cluster-info, checked against the pins.
Result<kube::Credentials> trusted_cluster(const std::string& configmap,
                                          const kube::BootstrapToken& token,
                                          const DiscoverySettings& settings) {
  auto info = kube::parse_cluster_info(configmap, token.id);
  if (!info) return info.error();
  if (!info->signature) {
    // Unavailable, not InvalidArgument: the token may not have been created yet.
    return make_error(ErrorCode::Unavailable,
                      "kube-public/cluster-info has no signature for token id " + token.id +
                          " (is the token valid and meant for signing?)");
  }
  if (!cluster_info_signed_by(*info->signature, info->kubeconfig, token.full())) {
    return make_error(ErrorCode::InvalidArgument,
                      "kube-public/cluster-info is not signed by the join token");
  }
  auto cluster = kube::parse_cluster_kubeconfig(info->kubeconfig);
  if (!cluster) return make_error("kube-public/cluster-info: " + cluster.error().message);
  if (cluster->ca_pem.empty()) {
    return make_error(ErrorCode::InvalidArgument, "kube-public/cluster-info names no CA");
  }
  if (!settings.unsafe_skip_ca_verification) {
    auto pin = net::public_key_pin(cluster->ca_pem);
    if (!pin) return pin.error();
    const auto& pins = settings.ca_cert_hashes;
    if (std::find(pins.begin(), pins.end(), *pin) == pins.end()) {
      return make_error(
          ErrorCode::InvalidArgument,
          "the cluster CA's public key " + *pin + " matches no --discovery-token-ca-cert-hash");
    }
  }
  return cluster;
}

}  // namespace

bool cluster_info_signed_by(std::string_view jws, std::string_view content,
                            std::string_view token) {
  auto parsed = kube::parse_bootstrap_token(token);
  if (!parsed) return false;
  auto split = kube::split_detached_jws(jws, content, parsed->id);
  if (!split) return false;
  // The key is the token's secret alone (k8s.io/cluster-bootstrap/token/jws).
  const std::string expected = net::hmac_sha256(parsed->secret, split->signing_input);
  return net::secrets_equal(expected, split->signature);
}

boost::asio::awaitable<Result<kube::Credentials>> discover_cluster(
    boost::asio::any_io_executor executor, const ServerAddress& server,
    const DiscoverySettings& settings) {
  auto token = kube::parse_bootstrap_token(settings.join_token);
  if (!token)
    co_return make_error(ErrorCode::InvalidArgument, "--join-token: " + token.error().message);
  if (settings.ca_cert_hashes.empty() && !settings.unsafe_skip_ca_verification) {
    co_return make_error(ErrorCode::InvalidArgument,
                         "--join-token needs --discovery-token-ca-cert-hash (or "
                         "--discovery-token-unsafe-skip-ca-verification)");
  }
  kube::Credentials insecure;
  insecure.insecure_skip_tls_verify = true;
  auto first = co_await read_cluster_info(executor, server, insecure, settings.timeout);
  if (!first) co_return first.error();
  auto cluster = trusted_cluster(*first, *token, settings);
  if (!cluster) co_return cluster.error();
  // Now that the CA is known, read again over a verified connection: the same answer, or the
  // first one came from someone else.
  kube::Credentials verified = *cluster;
  auto second = co_await read_cluster_info(executor, server, verified, settings.timeout);
  if (!second) co_return second.error();
  auto again = kube::parse_cluster_info(*second, token->id);
  auto before = kube::parse_cluster_info(*first, token->id);
  if (!again || again->kubeconfig != before->kubeconfig) {
    co_return make_error(ErrorCode::InvalidArgument,
                         "kube-public/cluster-info changed between the unverified and the "
                         "verified read");
  }
  co_return cluster;
}

}  // namespace yurthub::hub
