// Fuzz target for what the hub's certificate manager reads from the network
// (kube/certificate_signing_request.h, kube/kubeconfig.h parse_cluster_kubeconfig): a
// CertificateSigningRequest answer, the unauthenticated kube-public/cluster-info ConfigMap and the
// kubeconfig inside it, a detached JWS, a bootstrap token and the default/kubernetes Service.
// Input: parts separated by NUL bytes: CSR JSON, cluster-info JSON, JWS, JWS content, token text,
// Service JSON. Oracles: an issued state carries a certificate; a parsed token has kubeadm's
// lengths; a split JWS signs the content; no cluster IP read is empty or "None".
#include <string>

#include "base/base64.h"
#include "kube/certificate_signing_request.h"
#include "kube/kubeconfig.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 6);
  if (auto state = kube::parse_csr_state(parts[0])) {
    const bool issued = state->phase == kube::CsrState::Phase::Issued;
    fuzz::check(issued == !state->certificate_pem.empty(), "issued iff a certificate was read");
  }
  if (auto info = kube::parse_cluster_info(parts[1], "abcdef")) {
    fuzz::check(!info->kubeconfig.empty(), "cluster-info parsed without a kubeconfig");
    auto cluster = kube::parse_cluster_kubeconfig(info->kubeconfig);
    if (cluster) {
      fuzz::check(cluster->client_cert_pem.empty(), "a cluster kubeconfig has no user");
    }
  }
  if (auto split = kube::split_detached_jws(parts[2], parts[3], "abcdef")) {
    const std::string tail = "." + base::encode_base64url(parts[3]);
    fuzz::check(split->signing_input.size() >= tail.size() &&
                    split->signing_input.compare(split->signing_input.size() - tail.size(),
                                                 tail.size(), tail) == 0,
                "the signing input ends with the content");
  }
  if (auto token = kube::parse_bootstrap_token(parts[4])) {
    fuzz::check(token->id.size() == 6 && token->secret.size() == 16, "token lengths");
  }
  if (auto ips = kube::parse_service_cluster_ips(parts[5])) {
    for (const auto& ip : *ips) fuzz::check(!ip.empty() && ip != "None", "a cluster IP is kept");
  }
  return 0;
}
