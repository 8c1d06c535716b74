// kube-controller-manager's local CSR signer (pkg/controller/certificates/signer and
// authority), in the fake: the signer-name policies of the well-known kubernetes.io signers and
// a CA (--csr-signing-cert/--csr-signing-key) that issues certificates the way
// PermissiveSigningPolicy does: subject and SANs (DNS, IP, email, URI) from the request, key
// usages and extended key usages from spec.usages, BasicConstraints CA:FALSE, a random 128-bit
// serial, notBefore backdated 5 minutes, notAfter capped by the CA's own. Used by
// controllers.cc once a CSR is approved. OpenSSL 3 only; immutable after load.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "base/result.h"
#include "test/fake_apiserver/csr_request.h"

namespace yurthub::fake {

enum class SignerVerdict {
  Unknown,   // not a signer the controller handles: the CSR stays approved and unsigned
  Refused,   // a well-known signer's policy refuses it: the CSR gets a Failed condition
  Accepted,  // sign it
};

// What the signer for `signer_name` makes of a parsed request with `usages`; `why` gets the
// Failed condition's message on Refused. Policies: kubernetes.io/kube-apiserver-client (usages
// within digital signature, key encipherment, client auth; client auth required),
// kubernetes.io/kube-apiserver-client-kubelet and kubernetes.io/kubelet-serving (the
// ValidateKubeletClientCSR / ValidateKubeletServingCSR checks on subject, SANs and usages).
SignerVerdict check_signer_policy(std::string_view signer_name, const ParsedCsr& csr,
                                  const std::vector<std::string>& usages, std::string& why);

class CsrSigner {
 public:
  using Clock = std::chrono::system_clock;

  // Loads the CA certificate and key (PEM files). `max_ttl` is the longest lifetime issued
  // (--csr-cert-lifetime-seconds, kube-controller-manager's --cluster-signing-duration).
  static Result<std::shared_ptr<const CsrSigner>> load(const std::string& cert_file,
                                                       const std::string& key_file,
                                                       std::chrono::seconds max_ttl);
  static Result<std::shared_ptr<const CsrSigner>> from_pem(std::string_view cert_pem,
                                                           std::string_view key_pem,
                                                           std::chrono::seconds max_ttl);

  // The lifetime of a certificate for spec.expirationSeconds (nullopt: not given): the smaller
  // of it and max_ttl, but at least 10 minutes unless max_ttl itself is shorter (the fake's
  // flag may ask for seconds-long certificates; the real signer never goes under 10 minutes).
  std::chrono::seconds lifetime(std::optional<std::int64_t> expiration_seconds) const;

  // Issues the certificate (PEM) for `csr`. Errors: unknown usage values (the real signer's
  // "unrecognized usage values: ..."), an expired CA, OpenSSL failures.
  Result<std::string> sign(const ParsedCsr& csr, const std::vector<std::string>& usages,
                           std::optional<std::int64_t> expiration_seconds,
                           Clock::time_point now) const;

 private:
  struct Free {
    void operator()(X509* x) const { X509_free(x); }
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
  };
  std::unique_ptr<X509, Free> ca_;
  std::unique_ptr<EVP_PKEY, Free> key_;
  std::chrono::seconds max_ttl_{0};
};

}  // namespace yurthub::fake
