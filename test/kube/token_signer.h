// Service-account tokens signed as kube-apiserver signs them, for tests: RSA and EC P-256 keys,
// their JWKs as /openid/v1/jwks publishes them, and JWTs signed RS256 or ES256 (raw r||s).
// Test-only; used by test/kube/service_account_keys_test.cc and test/cache/callers_test.cc.
#pragma once

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <memory>
#include <string>
#include <string_view>

#include "base/base64.h"

namespace yurthub::test_support {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

inline std::string b64(std::string_view s) { return base::encode_base64url(s); }

inline std::string bignum_bytes(const EVP_PKEY* key, const char* name) {
  BIGNUM* bn = nullptr;
  EVP_PKEY_get_bn_param(key, name, &bn);
  std::string out(static_cast<std::size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(out.data()));
  BN_free(bn);
  return out;
}

inline std::string rsa_jwk(const EVP_PKEY* key, const std::string& kid) {
  return R"({"use":"sig","kty":"RSA","kid":")" + kid + R"(","alg":"RS256","n":")" +
         b64(bignum_bytes(key, OSSL_PKEY_PARAM_RSA_N)) + R"(","e":")" +
         b64(bignum_bytes(key, OSSL_PKEY_PARAM_RSA_E)) + R"("})";
}

inline std::string ec_jwk(const EVP_PKEY* key, const std::string& kid) {
  unsigned char point[65];
  std::size_t length = 0;
  EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point, &length);
  const std::string raw(reinterpret_cast<char*>(point), length);
  return R"({"use":"sig","kty":"EC","kid":")" + kid + R"(","crv":"P-256","alg":"ES256","x":")" +
         b64(raw.substr(1, 32)) + R"(","y":")" + b64(raw.substr(33, 32)) + R"("})";
}

inline std::string sign(EVP_PKEY* key, const std::string& data) {
  const bool ec = EVP_PKEY_is_a(key, "EC");
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  std::size_t length = 0;
  EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key);
  EVP_DigestSign(ctx, nullptr, &length, reinterpret_cast<const unsigned char*>(data.data()),
                 data.size());
  std::string sig(length, '\0');
  EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &length,
                 reinterpret_cast<const unsigned char*>(data.data()), data.size());
  EVP_MD_CTX_free(ctx);
  sig.resize(length);
  if (!ec) return sig;
  // DER ECDSA-Sig-Value -> JWS r||s, 32 bytes each.
  const unsigned char* in = reinterpret_cast<const unsigned char*>(sig.data());
  ECDSA_SIG* parsed = d2i_ECDSA_SIG(nullptr, &in, static_cast<long>(sig.size()));
  std::string raw(64, '\0');
  BN_bn2binpad(ECDSA_SIG_get0_r(parsed), reinterpret_cast<unsigned char*>(raw.data()), 32);
  BN_bn2binpad(ECDSA_SIG_get0_s(parsed), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
  ECDSA_SIG_free(parsed);
  return raw;
}

// A compact JWT of `payload` signed by `key` with `alg` ("RS256" or "ES256") and header `kid`.
inline std::string token(EVP_PKEY* key, const std::string& alg, const std::string& kid,
                         const std::string& payload) {
  const std::string signed_part =
      b64(R"({"alg":")" + alg + R"(","kid":")" + kid + R"("})") + "." + b64(payload);
  return signed_part + "." + b64(sign(key, signed_part));
}

}  // namespace yurthub::test_support
