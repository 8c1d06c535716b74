// Bearer tokens as kube-apiserver reads them: the token in an Authorization header (its bearer
// authenticator's split), and the claims of a service-account JWT. The claims are read, not
// verified: the cache (cache/callers.h) uses them only for a token the apiserver has accepted
// (a 2xx answer to a request that carried it) or issued (kubelet's TokenRequest), so what they say
// was signed by the cluster. Pure; used by the proxy session (which token a request carries) and
// the cache (whose data a caller may read offline).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace yurthub::kube {

// The token of an `Authorization: Bearer <token>` value, as kube-apiserver's bearertoken
// authenticator takes it: the value trimmed of white space, split at its first two spaces, the
// scheme compared without regard to case, the token the second part (possibly empty, which the
// apiserver refuses). nullopt for another scheme or no token part.
std::optional<std::string_view> bearer_token(std::string_view authorization);

// The claims of a Kubernetes service-account token (a JWT, RFC 7519) that the hub uses.
struct TokenClaims {
  std::optional<std::int64_t> expires;     // `exp`, seconds since the epoch
  std::optional<std::int64_t> not_before;  // `nbf`
  std::string issuer;                      // `iss`
  std::vector<std::string> audiences;      // `aud`: a string or a list of them
  std::string subject;                     // `sub`: system:serviceaccount:<namespace>:<name>
  // The `kubernetes.io` claim of a bound token (empty for a legacy Secret-based token, whose
  // `kubernetes.io/serviceaccount/namespace` and `.../service-account.name` claims fill the first
  // two).
  std::string namespace_name, service_account, service_account_uid;
  std::string pod_name, pod_uid;  // the pod the token is bound to, if any
};

// The claims of `token` when it is a JWT with a JSON payload (its signature is not checked);
// nullopt otherwise (an opaque token, a bootstrap token, malformed).
std::optional<TokenClaims> read_jwt_claims(std::string_view token);

}  // namespace yurthub::kube
