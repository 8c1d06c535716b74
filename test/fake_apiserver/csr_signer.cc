// The CSR signer; see csr_signer.h. The certificate follows Go's x509.CreateCertificate on the
// template authority.go builds: extensions in Go's order (keyUsage critical, extKeyUsage,
// basicConstraints critical, authorityKeyIdentifier, subjectAltName), the subject re-encoded from
// the parsed name as pkix.Name.ToRDNSequence does.
#include "test/fake_apiserver/csr_signer.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

namespace yurthub::fake {
namespace {

using Usages = std::set<std::string>;

const std::map<std::string, std::string>& key_usage_names() {
  static const std::map<std::string, std::string> m = {{"signing", "digitalSignature"},
                                                       {"digital signature", "digitalSignature"},
                                                       {"content commitment", "nonRepudiation"},
                                                       {"key encipherment", "keyEncipherment"},
                                                       {"key agreement", "keyAgreement"},
                                                       {"data encipherment", "dataEncipherment"},
                                                       {"cert sign", "keyCertSign"},
                                                       {"crl sign", "cRLSign"},
                                                       {"encipher only", "encipherOnly"},
                                                       {"decipher only", "decipherOnly"}};
  return m;
}

// Extended key usages in Go's x509.ExtKeyUsage order (the signer sorts them by that value).
const std::vector<std::pair<std::string, std::string>>& ext_key_usage_names() {
  static const std::vector<std::pair<std::string, std::string>> v = {
      {"any", "anyExtendedKeyUsage"},
      {"server auth", "serverAuth"},
      {"client auth", "clientAuth"},
      {"code signing", "codeSigning"},
      {"email protection", "emailProtection"},
      {"s/mime", "emailProtection"},
      {"ipsec end system", "ipsecEndSystem"},
      {"ipsec tunnel", "ipsecTunnel"},
      {"ipsec user", "ipsecUser"},
      {"timestamping", "timeStamping"},
      {"ocsp signing", "OCSPSigning"},
      {"microsoft sgc", "msSGC"},
      {"netscape sgc", "nsSGC"}};
  return v;
}

std::string join_sorted(const Usages& u) {
  std::string out = "[";
  for (const auto& s : u) out += (out.size() > 1 ? " " : "") + s;
  return out + "]";
}

bool only_system_nodes(const ParsedCsr& csr) {
  return csr.organizations == std::vector<std::string>{"system:nodes"};
}

// pkg/apis/certificates/helpers.go ValidateKubeletServingCSR.
std::string kubelet_serving_error(const ParsedCsr& csr, const Usages& usages) {
  if (!only_system_nodes(csr)) return "subject organization is not system:nodes";
  if (csr.dns_names.empty() && csr.ips.empty()) return "DNS or IP subjectAltName is required";
  if (!csr.emails.empty()) return "Email subjectAltNames are not allowed";
  if (!csr.uris.empty()) return "URI subjectAltNames are not allowed";
  const Usages rsa = {"digital signature", "key encipherment", "server auth"};
  const Usages no_rsa = {"digital signature", "server auth"};
  if (usages != rsa && usages != no_rsa) return "usages did not match " + join_sorted(rsa);
  if (!csr.common_name.starts_with("system:node:")) {
    return "subject common name does not begin with system:node:";
  }
  return "";
}

// ValidateKubeletClientCSR.
std::string kubelet_client_error(const ParsedCsr& csr, const Usages& usages) {
  if (!only_system_nodes(csr)) return "subject organization is not system:nodes";
  if (!csr.dns_names.empty()) return "DNS subjectAltNames are not allowed";
  if (!csr.emails.empty()) return "Email subjectAltNames are not allowed";
  if (!csr.ips.empty()) return "IP subjectAltNames are not allowed";
  if (!csr.uris.empty()) return "URI subjectAltNames are not allowed";
  if (!csr.common_name.starts_with("system:node:")) {
    return "subject common name does not begin with system:node:";
  }
  const Usages rsa = {"client auth", "digital signature", "key encipherment"};
  const Usages no_rsa = {"client auth", "digital signature"};
  if (usages != rsa && usages != no_rsa) return "usages did not match " + join_sorted(rsa);
  return "";
}

// signer.go validAPIServerClientUsages.
std::string apiserver_client_error(const std::vector<std::string>& usages) {
  bool client_auth = false;
  for (const auto& u : usages) {
    if (u == "client auth") {
      client_auth = true;
    } else if (u != "digital signature" && u != "key encipherment") {
      return "invalid usage for client certificate: " + u;
    }
  }
  return client_auth ? "" : "missing required usage for client certificate: client auth";
}

// encoding/asn1: a string is a PrintableString if every byte is in that set, else UTF8String.
bool printable(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c >= '\'' && c <= ')') || (c >= '+' && c <= '/') || c == ' ' || c == ':' || c == '=' ||
           c == '?';
  });
}

std::string entry_utf8(X509_NAME_ENTRY* e) {
  unsigned char* out = nullptr;
  int len = ASN1_STRING_to_UTF8(&out, X509_NAME_ENTRY_get_data(e));
  if (len < 0) return "";
  std::string s(reinterpret_cast<char*>(out), static_cast<std::size_t>(len));
  OPENSSL_free(out);
  return s;
}

// pkix.Name.ToRDNSequence of the parsed subject: C, ST, L, street, postalCode, O, OU, CN,
// serialNumber; the values of one attribute type in one (multi-valued) RDN; CN and
// serialNumber single (the last one); other attribute types dropped.
X509_NAME* go_subject(X509_REQ* req) {
  const int order[] = {
      NID_countryName, NID_stateOrProvinceName, NID_localityName,           NID_streetAddress,
      NID_postalCode,  NID_organizationName,    NID_organizationalUnitName, NID_commonName,
      NID_serialNumber};
  X509_NAME* in = X509_REQ_get_subject_name(req);
  X509_NAME* out = X509_NAME_new();
  for (int nid : order) {
    std::vector<std::string> values;
    for (int i = X509_NAME_get_index_by_NID(in, nid, -1); i >= 0;
         i = X509_NAME_get_index_by_NID(in, nid, i)) {
      values.push_back(entry_utf8(X509_NAME_get_entry(in, i)));
    }
    if (values.empty()) continue;
    if (nid == NID_commonName || nid == NID_serialNumber)
      values.erase(values.begin(), values.end() - 1);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto& v = values[i];
      int type = printable(v) ? V_ASN1_PRINTABLESTRING : V_ASN1_UTF8STRING;
      X509_NAME_add_entry_by_NID(out, nid, type, reinterpret_cast<const unsigned char*>(v.data()),
                                 static_cast<int>(v.size()), -1, i == 0 ? 0 : -1);
    }
  }
  return out;
}

bool add_conf_ext(X509* cert, X509V3_CTX* ctx, int nid, const std::string& value) {
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

bool add_sans(X509* cert, const ParsedCsr& csr, bool critical) {
  GENERAL_NAMES* names = sk_GENERAL_NAME_new_null();
  auto add = [names](int type, const std::string& value) {
    ASN1_STRING* s = type == GEN_IPADD ? ASN1_OCTET_STRING_new() : ASN1_IA5STRING_new();
    ASN1_STRING_set(s, value.data(), static_cast<int>(value.size()));
    GENERAL_NAME* g = GENERAL_NAME_new();
    GENERAL_NAME_set0_value(g, type, s);
    sk_GENERAL_NAME_push(names, g);
  };
  // x509.marshalSANs order: DNS names, emails, IP addresses, URIs.
  for (const auto& d : csr.dns_names) add(GEN_DNS, d);
  for (const auto& e : csr.emails) add(GEN_EMAIL, e);
  for (const auto& ip : csr.ips) add(GEN_IPADD, ip);
  for (const auto& u : csr.uris) add(GEN_URI, u);
  bool ok = X509_add1_ext_i2d(cert, NID_subject_alt_name, names, critical ? 1 : 0,
                              X509V3_ADD_DEFAULT) == 1;
  GENERAL_NAMES_free(names);
  return ok;
}

std::time_t to_time_t(const ASN1_TIME* t) {
  std::tm tm{};
  ASN1_TIME_to_tm(t, &tm);
  return timegm(&tm);
}

std::string go_time(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[48];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S +0000 UTC", &tm);
  return buf;
}

const EVP_MD* digest_for(EVP_PKEY* key) {
  switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_ED25519:
      return nullptr;
    case EVP_PKEY_EC:  // Go picks the hash by curve size
      return EVP_PKEY_get_bits(key) > 384   ? EVP_sha512()
             : EVP_PKEY_get_bits(key) > 256 ? EVP_sha384()
                                            : EVP_sha256();
    default:
      return EVP_sha256();
  }
}

std::string read_file(const std::string& path, bool& ok) {
  std::ifstream in(path);
  ok = static_cast<bool>(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

SignerVerdict check_signer_policy(std::string_view signer_name, const ParsedCsr& csr,
                                  const std::vector<std::string>& usages, std::string& why) {
  Usages set(usages.begin(), usages.end());
  if (signer_name == "kubernetes.io/kube-apiserver-client") {
    why = apiserver_client_error(usages);
  } else if (signer_name == "kubernetes.io/kube-apiserver-client-kubelet") {
    why = kubelet_client_error(csr, set);
  } else if (signer_name == "kubernetes.io/kubelet-serving") {
    why = kubelet_serving_error(csr, set);
  } else {
    return SignerVerdict::Unknown;
  }
  return why.empty() ? SignerVerdict::Accepted : SignerVerdict::Refused;
}

Result<std::shared_ptr<const CsrSigner>> CsrSigner::load(const std::string& cert_file,
                                                         const std::string& key_file,
                                                         std::chrono::seconds max_ttl) {
  bool ok = false;
  std::string cert = read_file(cert_file, ok);
  if (!ok) return make_error("--csr-signing-cert=" + cert_file + ": cannot read");
  std::string key = read_file(key_file, ok);
  if (!ok) return make_error("--csr-signing-key=" + key_file + ": cannot read");
  return from_pem(cert, key, max_ttl);
}

Result<std::shared_ptr<const CsrSigner>> CsrSigner::from_pem(std::string_view cert_pem,
                                                             std::string_view key_pem,
                                                             std::chrono::seconds max_ttl) {
  auto signer = std::make_shared<CsrSigner>();
  std::unique_ptr<BIO, decltype(&BIO_free)> cb(
      BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())), BIO_free);
  signer->ca_.reset(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr));
  if (signer->ca_ == nullptr) return make_error("CSR signing certificate: not a PEM certificate");
  std::unique_ptr<BIO, decltype(&BIO_free)> kb(
      BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())), BIO_free);
  signer->key_.reset(PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
  if (signer->key_ == nullptr) return make_error("CSR signing key: not a PEM private key");
  if (X509_check_private_key(signer->ca_.get(), signer->key_.get()) != 1) {
    return make_error("CSR signing key does not match the signing certificate");
  }
  signer->max_ttl_ = max_ttl;
  return std::shared_ptr<const CsrSigner>(std::move(signer));
}

std::chrono::seconds CsrSigner::lifetime(std::optional<std::int64_t> expiration_seconds) const {
  if (!expiration_seconds) return max_ttl_;
  // signer.go duration(): honour a shorter request, never under 10 minutes.
  std::chrono::seconds wanted =
      std::max(std::chrono::seconds(*expiration_seconds), std::chrono::seconds(600));
  return std::min(wanted, max_ttl_);
}

Result<std::string> CsrSigner::sign(const ParsedCsr& csr, const std::vector<std::string>& usages,
                                    std::optional<std::int64_t> expiration_seconds,
                                    Clock::time_point now) const {
  std::string key_usage, ext_usage, unrecognized;
  for (const auto& u : usages) {
    auto k = key_usage_names().find(u);
    bool ext = std::any_of(ext_key_usage_names().begin(), ext_key_usage_names().end(),
                           [&](const auto& p) { return p.first == u; });
    if (k != key_usage_names().end()) {
      if (key_usage.find(k->second) == std::string::npos) key_usage += "," + k->second;
    } else if (!ext) {
      unrecognized += (unrecognized.empty() ? "\"" : " \"") + u + "\"";
    }
  }
  if (!unrecognized.empty()) return make_error("unrecognized usage values: [" + unrecognized + "]");
  for (const auto& [name, nid_name] : ext_key_usage_names()) {
    bool wanted = std::find(usages.begin(), usages.end(), name) != usages.end();
    if (wanted && ext_usage.find(nid_name) == std::string::npos) {
      ext_usage += (ext_usage.empty() ? "" : ",") + nid_name;
    }
  }

  // PermissiveSigningPolicy with Backdate 5m and Short 8h (signer.go sign()).
  const std::time_t t_now = Clock::to_time_t(now);
  const std::int64_t ttl = lifetime(expiration_seconds).count();
  constexpr std::int64_t kBackdate = 5 * 60, kShort = 8 * 3600;
  std::time_t not_before = t_now - kBackdate;
  std::time_t not_after = t_now + (ttl < kShort ? ttl : ttl - kBackdate);
  const std::time_t ca_not_after = to_time_t(X509_get0_notAfter(ca_.get()));
  if (not_after >= ca_not_after) not_after = ca_not_after;
  if (not_before >= ca_not_after) {
    return make_error("the signer has expired: NotAfter=" + go_time(ca_not_after));
  }
  if (t_now >= ca_not_after) {
    return make_error("refusing to sign a certificate that expired in the past: NotAfter=" +
                      go_time(ca_not_after));
  }

  std::unique_ptr<X509, Free> cert(X509_new());
  X509* c = cert.get();
  X509_set_version(c, 2);
  std::unique_ptr<BIGNUM, decltype(&BN_free)> serial(BN_new(), BN_free);
  BN_rand(serial.get(), 128, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY);  // rand.Int(2^128)
  BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(c));
  X509_set_issuer_name(c, X509_get_subject_name(ca_.get()));
  X509_NAME* subject = go_subject(csr.req.get());
  X509_set_subject_name(c, subject);
  const bool empty_subject = X509_NAME_entry_count(subject) == 0;
  X509_NAME_free(subject);
  ASN1_TIME_set(X509_getm_notBefore(c), not_before);
  ASN1_TIME_set(X509_getm_notAfter(c), not_after);
  X509_set_pubkey(c, X509_REQ_get0_pubkey(csr.req.get()));

  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, ca_.get(), c, nullptr, nullptr, 0);
  bool ok = true;
  if (!key_usage.empty()) ok = ok && add_conf_ext(c, &ctx, NID_key_usage, "critical" + key_usage);
  if (!ext_usage.empty()) ok = ok && add_conf_ext(c, &ctx, NID_ext_key_usage, ext_usage);
  ok = ok && add_conf_ext(c, &ctx, NID_basic_constraints, "critical,CA:FALSE");
  // Go copies the parent's SubjectKeyId, if it has one, into AuthorityKeyId.
  if (X509_get0_subject_key_id(ca_.get()) != nullptr) {
    ok = ok && add_conf_ext(c, &ctx, NID_authority_key_identifier, "keyid:always");
  }
  if (!csr.dns_names.empty() || !csr.emails.empty() || !csr.ips.empty() || !csr.uris.empty()) {
    ok = ok && add_sans(c, csr, empty_subject);  // critical when the subject is empty (RFC 5280)
  }
  if (!ok) return make_error("failed to sign certificate: cannot add extensions");
  if (X509_sign(c, key_.get(), digest_for(key_.get())) <= 0) {
    return make_error("failed to sign certificate: OpenSSL X509_sign failed");
  }
  std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_X509(out.get(), c);
  char* data = nullptr;
  long len = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<std::size_t>(len));
}

}  // namespace yurthub::fake
