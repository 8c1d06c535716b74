// X.509 keys, requests and certificate inspection on OpenSSL 3; see x509.h.
#include "net/x509.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>

#include <ctime>
#include <memory>

namespace yurthub::net {
namespace {

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using ReqPtr = std::unique_ptr<X509_REQ, Deleter<X509_REQ, X509_REQ_free>>;
using NamesPtr = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES, GENERAL_NAMES_free>>;
using ExtsPtr = std::unique_ptr<STACK_OF(X509_EXTENSION), void (*)(STACK_OF(X509_EXTENSION)*)>;

BioPtr read_bio(std::string_view text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

KeyPtr read_key(std::string_view pem) {
  auto bio = read_bio(pem);
  return KeyPtr(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

X509Ptr read_certificate(std::string_view pem) {
  auto bio = read_bio(pem);
  return X509Ptr(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

std::chrono::system_clock::time_point to_time_point(const ASN1_TIME* time) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(time, &tm) != 1) return {};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::vector<std::string> subject_entries(X509_NAME* name, int nid) {
  std::vector<std::string> out;
  for (int i = X509_NAME_get_index_by_NID(name, nid, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(name, nid, i)) {
    const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                     static_cast<std::size_t>(ASN1_STRING_length(data)));
  }
  return out;
}

Status add_name_entry(X509_NAME* name, const char* field, const std::string& value) {
  if (X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                 0) != 1) {
    return make_error(ErrorCode::InvalidArgument,
                      std::string("cannot put ") + field + "=" + value + " in a subject");
  }
  return {};
}

// The subjectAltName extension for `subject`'s DNS names and IPs; null when there are none.
Result<X509_EXTENSION*> alt_names(const CertificateRequestSubject& subject) {
  if (subject.dns_names.empty() && subject.ip_addresses.empty()) return nullptr;
  NamesPtr names(sk_GENERAL_NAME_new_null());
  for (const auto& dns : subject.dns_names) {
    GENERAL_NAME* name = GENERAL_NAME_new();
    ASN1_IA5STRING* text = ASN1_IA5STRING_new();
    ASN1_STRING_set(text, dns.data(), static_cast<int>(dns.size()));
    GENERAL_NAME_set0_value(name, GEN_DNS, text);
    sk_GENERAL_NAME_push(names.get(), name);
  }
  for (const auto& ip : subject.ip_addresses) {
    ASN1_OCTET_STRING* octets = a2i_IPADDRESS(ip.c_str());
    if (octets == nullptr) {
      return make_error(ErrorCode::InvalidArgument, "not an IP address: " + ip);
    }
    GENERAL_NAME* name = GENERAL_NAME_new();
    GENERAL_NAME_set0_value(name, GEN_IPADD, octets);
    sk_GENERAL_NAME_push(names.get(), name);
  }
  return X509V3_EXT_i2d(NID_subject_alt_name, 0, names.get());
}

// The subjectAltName DNS and IP entries of `cert`.
void read_alt_names(X509* cert, CertificateInfo& info) {
  NamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return;
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type == GEN_DNS) {
      const ASN1_STRING* dns = name->d.dNSName;
      info.dns_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                                  static_cast<std::size_t>(ASN1_STRING_length(dns)));
    } else if (name->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = name->d.iPAddress;
      const int family = ASN1_STRING_length(ip) == 4 ? AF_INET : AF_INET6;
      if (ASN1_STRING_length(ip) != 4 && ASN1_STRING_length(ip) != 16) continue;
      char text[INET6_ADDRSTRLEN] = {};
      if (inet_ntop(family, ASN1_STRING_get0_data(ip), text, sizeof text) != nullptr) {
        info.ip_addresses.emplace_back(text);
      }
    }
  }
}

}  // namespace

Result<std::string> generate_private_key_pem() {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return make_error("cannot generate an ECDSA P-256 key");
  BioPtr out(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PrivateKey(out.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return make_error("cannot write the new key as PEM");
  }
  return bio_text(out.get());
}

Result<std::string> make_certificate_request_pem(const std::string& key_pem,
                                                 const CertificateRequestSubject& subject) {
  KeyPtr key = read_key(key_pem);
  if (!key) return make_error(ErrorCode::InvalidArgument, "the private key does not parse");
  ReqPtr req(X509_REQ_new());
  X509_REQ_set_version(req.get(), 0);
  X509_NAME* name = X509_REQ_get_subject_name(req.get());
  for (const auto& org : subject.organizations) {
    if (auto added = add_name_entry(name, "O", org); !added) return added.error();
  }
  if (auto added = add_name_entry(name, "CN", subject.common_name); !added) return added.error();
  auto san = alt_names(subject);
  if (!san) return san.error();
  if (*san != nullptr) {
    ExtsPtr exts(sk_X509_EXTENSION_new_null(), [](STACK_OF(X509_EXTENSION) * s) {
      sk_X509_EXTENSION_pop_free(s, X509_EXTENSION_free);
    });
    sk_X509_EXTENSION_push(exts.get(), *san);
    X509_REQ_add_extensions(req.get(), exts.get());
  }
  X509_REQ_set_pubkey(req.get(), key.get());
  if (X509_REQ_sign(req.get(), key.get(), EVP_sha256()) <= 0) {
    return make_error("cannot sign the certificate request");
  }
  BioPtr out(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509_REQ(out.get(), req.get()) != 1) {
    return make_error("cannot write the certificate request as PEM");
  }
  return bio_text(out.get());
}

Result<CertificateInfo> inspect_certificate(std::string_view pem) {
  X509Ptr cert = read_certificate(pem);
  if (!cert) return make_error(ErrorCode::InvalidArgument, "no PEM certificate that parses");
  CertificateInfo info;
  X509_NAME* subject = X509_get_subject_name(cert.get());
  auto names = subject_entries(subject, NID_commonName);
  if (!names.empty()) info.common_name = names.front();
  info.organizations = subject_entries(subject, NID_organizationName);
  read_alt_names(cert.get(), info);
  info.not_before = to_time_point(X509_get0_notBefore(cert.get()));
  info.not_after = to_time_point(X509_get0_notAfter(cert.get()));
  return info;
}

bool key_matches_certificate(std::string_view key_pem, std::string_view cert_pem) {
  KeyPtr key = read_key(key_pem);
  X509Ptr cert = read_certificate(cert_pem);
  return key && cert && X509_check_private_key(cert.get(), key.get()) == 1;
}

Result<std::string> public_key_pin(std::string_view cert_pem) {
  X509Ptr cert = read_certificate(cert_pem);
  if (!cert) return make_error(ErrorCode::InvalidArgument, "no PEM certificate that parses");
  unsigned char* der = nullptr;
  const int length = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert.get()), &der);
  if (length <= 0) return make_error("cannot encode the certificate's public key");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_length = 0;
  const bool hashed = EVP_Digest(der, static_cast<std::size_t>(length), digest, &digest_length,
                                 EVP_sha256(), nullptr) == 1;
  OPENSSL_free(der);
  if (!hashed) return make_error("cannot hash the certificate's public key");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string pin = "sha256:";
  for (unsigned i = 0; i < digest_length; ++i) {
    pin += kHex[digest[i] >> 4];
    pin += kHex[digest[i] & 15];
  }
  return pin;
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &length);
  return std::string(reinterpret_cast<const char*>(mac), length);
}

}  // namespace yurthub::net
