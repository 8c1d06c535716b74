// The Kubernetes objects of certificate bootstrap, as JSON: a certificates.k8s.io/v1
// CertificateSigningRequest to create and the state read back from one; a bootstrap token
// ("abcdef.0123456789abcdef"); the kube-public/cluster-info ConfigMap's kubeconfig and its
// detached JWS signatures; the default/kubernetes Service's cluster IPs, which the hub's serving
// certificate names. Pure (no I/O, no crypto): the hub's certificate manager
// (hub/certificate/*) does the requests and the signing checks.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace yurthub::kube {

inline constexpr std::string_view kClientSigner = "kubernetes.io/kube-apiserver-client";
inline constexpr std::string_view kServingSigner = "kubernetes.io/kubelet-serving";
inline constexpr std::string_view kCsrPath =
    "/apis/certificates.k8s.io/v1/certificatesigningrequests";

struct CsrSpec {
  std::string request_pem;  // PEM CERTIFICATE REQUEST
  std::string signer_name;
  std::vector<std::string> usages;  // "digital signature", "client auth", ...
  std::optional<long> expiration_seconds;
};

// The JSON body of a POST to kCsrPath: `generateName: csr-`, the request base64-encoded.
std::string csr_object_json(const CsrSpec& spec);

struct CsrState {
  enum class Phase { Pending, Approved, Issued, Denied, Failed };
  Phase phase = Phase::Pending;
  std::string name;
  std::string certificate_pem;  // status.certificate, decoded; when Issued
  std::string reason;           // the Denied or Failed condition's reason and message
};

// Reads a CertificateSigningRequest object: its name, conditions and issued certificate. Errors
// for JSON that is not such an object, or a status.certificate that is not base64.
Result<CsrState> parse_csr_state(std::string_view json);

struct BootstrapToken {
  std::string id;      // 6 of [a-z0-9]
  std::string secret;  // 16 of [a-z0-9]
  std::string full() const { return id + "." + secret; }
};

// Parses "<id>.<secret>" as kubeadm's token format ([a-z0-9]{6}\.[a-z0-9]{16}). The error never
// repeats the secret.
Result<BootstrapToken> parse_bootstrap_token(std::string_view text);

struct ClusterInfo {
  std::string kubeconfig;                // data.kubeconfig, verbatim
  std::optional<std::string> signature;  // data["jws-kubeconfig-<token id>"]
};

// Reads the kube-public/cluster-info ConfigMap JSON for `token_id`'s signature.
Result<ClusterInfo> parse_cluster_info(std::string_view configmap_json, std::string_view token_id);

// The cluster IPs of a Service object (spec.clusterIPs, or spec.clusterIP when that is absent), as
// written; "None" (headless) is left out. Errors for JSON that is not an object with a spec.
Result<std::vector<std::string>> parse_service_cluster_ips(std::string_view service_json);

// A detached JWS ("<header>..<signature>", base64url) split into the parts a verifier needs: the
// signing input to recompute ("<header>.<base64url(content)>") and the signature bytes. Errors
// for another shape, a header that is not {"alg":"HS256","kid":<token id>}, or bad base64url.
struct DetachedJws {
  std::string signing_input;
  std::string signature;
};
Result<DetachedJws> split_detached_jws(std::string_view jws, std::string_view content,
                                       std::string_view token_id);

}  // namespace yurthub::kube
