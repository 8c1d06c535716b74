// The apiserver's service-account token keys, as its OIDC issuer discovery publishes them
// (`/.well-known/openid-configuration` and `/openid/v1/jwks`), and the check of a token against
// them as kube-apiserver's service-account authenticator does it (pkg/serviceaccount/jwt.go,
// go-jose): the signature (RS256/384/512 with an RSA key, ES256/384/512 with a P-256/384/521
// key, the key picked by `kid`), the issuer, an audience, `exp` and `nbf`. Only what the token
// says is checked: whether its pod still exists is the caller's (cache/callers.h) question.
// Pure apart from OpenSSL; immutable once parsed, so shared between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kube/bearer_token.h"

namespace yurthub::kube {

class ServiceAccountKeys {
 public:
  static constexpr std::size_t kMaxKeys = 32;
  static constexpr std::size_t kMaxTokenBytes = 16u << 10;

  // From the two discovery documents, as the apiserver serves them. Keys of a type or curve the
  // apiserver never signs with are skipped; an error when none is usable or a document is not
  // what the apiserver serves.
  static Result<ServiceAccountKeys> parse(std::string_view configuration, std::string_view jwks);

  const std::string& issuer() const { return issuer_; }
  std::size_t size() const { return keys_.size(); }

  // The claims of `token` when it is signed by one of the keys, was issued by issuer(), names one
  // of `audiences` (or the issuer, the apiserver's default audience, when `audiences` is empty),
  // has not expired at `now` (seconds since the epoch) and is not used before its `nbf` (with
  // the apiserver's minute of leeway). Otherwise an error saying which check failed.
  Result<TokenClaims> verify(std::string_view token, std::int64_t now,
                             const std::vector<std::string>& audiences) const;

 private:
  struct Key;
  std::string issuer_;
  std::vector<std::shared_ptr<const Key>> keys_;
};

}  // namespace yurthub::kube
