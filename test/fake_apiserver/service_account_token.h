// kube-apiserver's authenticator for the bound service-account tokens the fake's TokenRequest
// issues (pkg/serviceaccount/jwt.go and claims.go's validator, v1.26): the token must be an RS256
// JWS this fake's key signed, name the fake's issuer and its API audience, be within exp/nbf/iat
// (go-jose's minute of leeway), and the service account and the bound pod or secret it names
// must still exist with the uids the token carries. Router calls it per request, after the token
// file; single-threaded like the Store it reads.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "test/fake_apiserver/auth.h"
#include "test/fake_apiserver/service_account_key.h"
#include "test/fake_apiserver/store.h"

namespace yurthub::fake {

// The issuer the tokens carry (--service-account-issuer) and the API audience
// (--api-audiences defaults to the issuer).
inline constexpr std::string_view kServiceAccountIssuer =
    "https://kubernetes.default.svc.cluster.local";

// The identity of a valid token: user system:serviceaccount:<ns>:<name>, uid the service
// account's, groups system:serviceaccounts and system:serviceaccounts:<ns> (system:authenticated
// is added wherever the fake adds it for every user). nullopt for anything else, so the caller
// answers 401 as for an unknown token.
std::optional<Identity> authenticate_service_account_token(
    const Store& store, const ServiceAccountKey& key, std::string_view token,
    std::chrono::system_clock::time_point now);

}  // namespace yurthub::fake
