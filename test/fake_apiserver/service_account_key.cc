// The service-account signing key; see service_account_key.h.
#include "test/fake_apiserver/service_account_key.h"

#include <fstream>
#include <sstream>
#include <vector>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include "base/base64.h"
#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake {
namespace {

struct FreeMdCtx {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, FreeMdCtx>;

std::string as_string(const unsigned char* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// An RSA key parameter (OSSL_PKEY_PARAM_RSA_N or _E) as big-endian bytes, no leading zeros,
// as Go's big.Int.Bytes() (go-jose writes n and e from it).
std::string rsa_param(const EVP_PKEY* key, const char* name) {
  BIGNUM* bn = nullptr;
  if (EVP_PKEY_get_bn_param(key, name, &bn) != 1) return "";
  std::vector<unsigned char> bytes(static_cast<std::size_t>(BN_num_bytes(bn)));
  BN_bn2bin(bn, bytes.data());
  BN_free(bn);
  return as_string(bytes.data(), bytes.size());
}

// keyIDFromPublicKey: base64url(SHA-256(x509.MarshalPKIXPublicKey(pub))), unpadded.
Result<std::string> key_id(EVP_PKEY* key) {
  unsigned char* der = nullptr;
  int len = i2d_PUBKEY(key, &der);
  if (len <= 0) return make_error("cannot encode the service-account public key");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_len = 0;
  int ok =
      EVP_Digest(der, static_cast<std::size_t>(len), digest, &digest_len, EVP_sha256(), nullptr);
  OPENSSL_free(der);
  if (ok != 1) return make_error("cannot hash the service-account public key");
  return base::encode_base64url(as_string(digest, digest_len));
}

}  // namespace

Result<ServiceAccountKey> ServiceAccountKey::adopt(KeyPtr key) {
  if (key == nullptr || EVP_PKEY_is_a(key.get(), "RSA") != 1) {
    return make_error("not an RSA private key");
  }
  auto kid = key_id(key.get());
  if (!kid) return kid.error();
  ServiceAccountKey out;
  out.key_ = std::move(key);
  out.kid_ = std::move(*kid);
  return out;
}

Result<ServiceAccountKey> ServiceAccountKey::from_pem(std::string_view pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  if (bio == nullptr) return make_error("out of memory");
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    ERR_clear_error();
    return make_error("no PEM private key");
  }
  return adopt(std::move(key));
}

Result<ServiceAccountKey> ServiceAccountKey::load(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return make_error("--service-account-key-file=" + path + ": cannot read");
  auto key = from_pem(text.str());
  if (!key) return make_error("--service-account-key-file=" + path + ": " + key.error().message);
  return key;
}

Result<ServiceAccountKey> ServiceAccountKey::generate() {
  KeyPtr key(EVP_RSA_gen(2048));
  if (key == nullptr) return make_error("cannot generate an RSA 2048 service-account key");
  return adopt(std::move(key));
}

std::string ServiceAccountKey::sign(std::string_view claims) const {
  const std::string input = base::encode_base64url(R"({"alg":"RS256","kid":")" + kid_ + "\"}") +
                            "." + base::encode_base64url(claims);
  MdCtxPtr ctx(EVP_MD_CTX_new());
  std::size_t len = 0;
  std::vector<unsigned char> sig;
  // The default RSA padding of EVP_DigestSign is PKCS#1 v1.5: RS256 (RFC 7518 section 3.3).
  if (ctx == nullptr ||
      EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(input.data()),
                     input.size()) != 1) {
    return input + ".";
  }
  sig.resize(len);
  if (EVP_DigestSign(ctx.get(), sig.data(), &len,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    return input + ".";
  }
  return input + "." + base::encode_base64url(as_string(sig.data(), len));
}

Result<std::string> ServiceAccountKey::verify(std::string_view token) const {
  const auto dot1 = token.find('.');
  const auto dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    return make_error("not a compact JWS");
  }
  auto header = base::decode_base64url(token.substr(0, dot1));
  auto claims = base::decode_base64url(token.substr(dot1 + 1, dot2 - dot1 - 1));
  auto sig = base::decode_base64url(token.substr(dot2 + 1));
  if (!header || !claims || !sig) return make_error("bad base64url in the JWS");
  auto h = parse_json(*header);
  if (!h || !h->IsObject() || !h->HasMember("alg") || !(*h)["alg"].IsString() ||
      std::string_view((*h)["alg"].GetString()) != "RS256") {
    return make_error("the JWS header does not say RS256");
  }
  const std::string_view input = token.substr(0, dot2);
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (ctx == nullptr ||
      EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key_.get()) != 1 ||
      EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig->data()), sig->size(),
                       reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    // A refused signature leaves errors queued; the connection's TLS calls on this thread would
    // read them as their own (SSL_get_error looks at the queue first).
    ERR_clear_error();
    return make_error("the JWS signature does not verify");
  }
  return std::move(*claims);
}

std::string ServiceAccountKey::public_jwk() const {
  return R"({"use":"sig","kty":"RSA","kid":")" + kid_ + R"(","alg":"RS256","n":")" +
         base::encode_base64url(rsa_param(key_.get(), OSSL_PKEY_PARAM_RSA_N)) + R"(","e":")" +
         base::encode_base64url(rsa_param(key_.get(), OSSL_PKEY_PARAM_RSA_E)) + "\"}";
}

}  // namespace yurthub::fake
