// A PKCS#10 certificate request as the apiserver and the CSR signer see it: Go's
// certificates.ParseCSR (one PEM block of type CERTIFICATE REQUEST) plus
// x509.CertificateRequest.CheckSignature, with Go's error texts, and the parts the signer
// policies look at (subject CN and O, SANs, key type). Used by csr_validation.cc (the
// apiserver's create validation) and csr_signer.cc (kube-controller-manager's signer). The
// fake's own OpenSSL code: it shares nothing with the hub. Pure; thread-compatible.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <openssl/x509.h>

#include "base/result.h"

namespace yurthub::fake {

struct X509ReqFree {
  void operator()(X509_REQ* r) const { X509_REQ_free(r); }
};

struct ParsedCsr {
  std::unique_ptr<X509_REQ, X509ReqFree> req;
  std::string common_name;
  std::vector<std::string> organizations;  // subject O values, in order
  std::vector<std::string> dns_names;
  std::vector<std::string> emails;
  std::vector<std::string> uris;
  std::vector<std::string> ips;  // raw 4- or 16-byte addresses
  bool rsa = false;              // the request's public key is RSA
};

// Parses the PEM text of a request and verifies its self-signature. Errors are Go's words:
// "PEM block type must be CERTIFICATE REQUEST", "x509: malformed certificate request",
// "x509: ECDSA verification failure" or "crypto/rsa: verification error".
Result<ParsedCsr> parse_csr(std::string_view pem);

}  // namespace yurthub::fake
