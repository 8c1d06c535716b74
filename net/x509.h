// X.509 work the hub's certificate manager needs, on OpenSSL: a fresh key, a certificate signing
// request for it, what a certificate says (subject, validity), the kubeadm-style pin of a CA's
// public key, and HMAC-SHA256 for bootstrap-token JWS signatures. Called by
// hub/certificate/* (bootstrap, CSR, rotation); pure apart from the random generator.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace yurthub::net {

// A new ECDSA P-256 private key as PKCS#8 PEM ("PRIVATE KEY"), as client-go's certificate
// manager makes them.
Result<std::string> generate_private_key_pem();

struct CertificateRequestSubject {
  std::string common_name;
  std::vector<std::string> organizations;
  std::vector<std::string> dns_names;     // subjectAltName DNS entries
  std::vector<std::string> ip_addresses;  // subjectAltName IP entries, IPv4 or IPv6 text
};

// A PEM "CERTIFICATE REQUEST" for `key_pem`'s public key, signed with it (SHA-256). Errors name
// a bad key or an IP address that does not parse.
Result<std::string> make_certificate_request_pem(const std::string& key_pem,
                                                 const CertificateRequestSubject& subject);

struct CertificateInfo {
  std::string common_name;
  std::vector<std::string> organizations;
  std::vector<std::string> dns_names;     // subjectAltName DNS entries
  std::vector<std::string> ip_addresses;  // subjectAltName IP entries, as text
  std::chrono::system_clock::time_point not_before;
  std::chrono::system_clock::time_point not_after;
};

// What the first certificate in `pem` says. An error if there is none or it does not parse.
Result<CertificateInfo> inspect_certificate(std::string_view pem);

// True when `key_pem` is the private key of the first certificate in `cert_pem`.
bool key_matches_certificate(std::string_view key_pem, std::string_view cert_pem);

// kubeadm's CA pin of the first certificate in `cert_pem`: "sha256:" and the lowercase hex
// SHA-256 of its DER SubjectPublicKeyInfo (`--discovery-token-ca-cert-hash`).
Result<std::string> public_key_pin(std::string_view cert_pem);

// HMAC-SHA256 of `data` under `key`, raw bytes (32).
std::string hmac_sha256(std::string_view key, std::string_view data);

}  // namespace yurthub::net
