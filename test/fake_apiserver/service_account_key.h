// The fake's service-account token key, as kube-apiserver's --service-account-signing-key-file
// with its public half in --service-account-key-file: one RSA private key that signs every
// TokenRequest token RS256 (RSASSA-PKCS1-v1_5, SHA-256) and whose public half the issuer
// discovery publishes as a JWK. The kid is keyIDFromPublicKey's (pkg/serviceaccount/jwt.go):
// unpadded base64url of the SHA-256 of the PKIX SubjectPublicKeyInfo DER. Written on OpenSSL 3
// directly: the fake is the oracle for the hub's own token checks and shares none of their code.
// Immutable once made; used by token_request.cc, service_account_token.cc and issuer_discovery.cc.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <openssl/evp.h>

#include "base/result.h"

namespace yurthub::fake {

class ServiceAccountKey {
 public:
  // A PEM RSA private key (PKCS#1 or PKCS#8, unencrypted). Errors name the file.
  static Result<ServiceAccountKey> load(const std::string& path);
  static Result<ServiceAccountKey> from_pem(std::string_view pem);
  // A fresh RSA 2048 key (EVP_RSA_gen), for a fake started without --service-account-key-file.
  static Result<ServiceAccountKey> generate();

  const std::string& kid() const { return kid_; }

  // The compact JWS of `claims` (a JSON object's text): base64url (unpadded) of the header
  // {"alg":"RS256","kid":"<kid>"}, of `claims` and of the RS256 signature over the first two,
  // joined by '.', as go-jose signs the apiserver's tokens. Should OpenSSL fail to sign, the
  // signature part is empty, so the token never verifies.
  std::string sign(std::string_view claims) const;

  // The decoded claims of `token` if it is a compact JWS whose header says RS256 and whose
  // signature this key verifies (the kid is not looked at: the apiserver tries every key it
  // has). Otherwise an error saying what was wrong.
  Result<std::string> verify(std::string_view token) const;

  // The public key as go-jose marshals it in the apiserver's JWKS:
  // {"use":"sig","kty":"RSA","kid":...,"alg":"RS256","n":...,"e":...}, n and e unpadded
  // base64url of their big-endian bytes without leading zeros.
  std::string public_jwk() const;

 private:
  struct FreeKey {
    void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
  };
  using KeyPtr = std::unique_ptr<EVP_PKEY, FreeKey>;

  // REQUIRES: an RSA private key.
  static Result<ServiceAccountKey> adopt(KeyPtr key);

  KeyPtr key_;
  std::string kid_;
};

}  // namespace yurthub::fake
