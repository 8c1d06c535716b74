// Certificate request parsing; see csr_request.h.
#include "test/fake_apiserver/csr_request.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

namespace yurthub::fake {
namespace {

std::string utf8(const ASN1_STRING* s) {
  unsigned char* out = nullptr;
  int len = ASN1_STRING_to_UTF8(&out, s);
  if (len < 0) return "";
  std::string text(reinterpret_cast<char*>(out), static_cast<std::size_t>(len));
  OPENSSL_free(out);
  return text;
}

std::string raw(const ASN1_STRING* s) {
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                     static_cast<std::size_t>(ASN1_STRING_length(s)));
}

void read_subject(X509_REQ* req, ParsedCsr& out) {
  X509_NAME* subject = X509_REQ_get_subject_name(req);
  for (int i = 0; i < X509_NAME_entry_count(subject); ++i) {
    X509_NAME_ENTRY* e = X509_NAME_get_entry(subject, i);
    int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
    // Go's pkix.Name keeps the last CN and every O.
    if (nid == NID_commonName) out.common_name = utf8(X509_NAME_ENTRY_get_data(e));
    if (nid == NID_organizationName) out.organizations.push_back(utf8(X509_NAME_ENTRY_get_data(e)));
  }
}

void read_sans(X509_REQ* req, ParsedCsr& out) {
  STACK_OF(X509_EXTENSION)* exts = X509_REQ_get_extensions(req);
  if (exts == nullptr) return;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509V3_get_d2i(exts, NID_subject_alt_name, nullptr, nullptr));
  sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
  if (names == nullptr) return;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
    switch (n->type) {
      case GEN_DNS:
        out.dns_names.push_back(raw(n->d.dNSName));
        break;
      case GEN_EMAIL:
        out.emails.push_back(raw(n->d.rfc822Name));
        break;
      case GEN_URI:
        out.uris.push_back(raw(n->d.uniformResourceIdentifier));
        break;
      case GEN_IPADD:
        out.ips.push_back(raw(n->d.iPAddress));
        break;
      default:  // Go's parser keeps only these four kinds
        break;
    }
  }
  GENERAL_NAMES_free(names);
}

}  // namespace

Result<ParsedCsr> parse_csr(std::string_view pem) {
  const Error not_csr = make_error("PEM block type must be CERTIFICATE REQUEST");
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  char* name = nullptr;
  char* header = nullptr;
  unsigned char* data = nullptr;
  long len = 0;
  // Like Go's pem.Decode: the first PEM block, whatever precedes it.
  if (bio == nullptr || PEM_read_bio(bio.get(), &name, &header, &data, &len) != 1) return not_csr;
  std::string type = name;
  std::string der(reinterpret_cast<char*>(data), static_cast<std::size_t>(len));
  OPENSSL_free(name);
  OPENSSL_free(header);
  OPENSSL_free(data);
  if (type != "CERTIFICATE REQUEST") return not_csr;
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  ParsedCsr out;
  out.req.reset(d2i_X509_REQ(nullptr, &p, static_cast<long>(der.size())));
  if (out.req == nullptr || p != reinterpret_cast<const unsigned char*>(der.data()) + der.size()) {
    return make_error("x509: malformed certificate request");
  }
  EVP_PKEY* key = X509_REQ_get0_pubkey(out.req.get());
  if (key == nullptr) return make_error("x509: unsupported public key algorithm");
  out.rsa = EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA;
  if (X509_REQ_verify(out.req.get(), key) != 1) {
    switch (EVP_PKEY_get_base_id(key)) {
      case EVP_PKEY_RSA:
        return make_error("crypto/rsa: verification error");
      case EVP_PKEY_EC:
        return make_error("x509: ECDSA verification failure");
      case EVP_PKEY_ED25519:
        return make_error("x509: Ed25519 verification failure");
      default:
        return make_error("x509: cannot verify signature: algorithm unimplemented");
    }
  }
  read_subject(out.req.get(), out);
  read_sans(out.req.get(), out);
  return out;
}

}  // namespace yurthub::fake
