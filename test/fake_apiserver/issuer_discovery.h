// Service-account issuer discovery, as kube-apiserver v1.26 serves it (pkg/routes/
// openidmetadata.go, pkg/serviceaccount/openidmetadata.go): GET /.well-known/openid-configuration
// (application/json) and GET /openid/v1/jwks (application/jwk-set+json), compact JSON,
// Cache-Control "public, max-age=3600". Authorized as the default RBAC does it: the ClusterRole
// system:service-account-issuer-discovery (get on both paths) bound to system:serviceaccounts,
// plus the groups an operator's extra bindings add (--issuer-discovery-groups); system:masters
// passes every authorizer. Router calls serve() after authentication. Immutable; pure.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "test/fake_apiserver/auth.h"
#include "test/fake_apiserver/service_account_key.h"
#include "test/fake_apiserver/status.h"

namespace yurthub::fake {

inline constexpr std::string_view kOpenIdConfigurationPath = "/.well-known/openid-configuration";
inline constexpr std::string_view kJwksPath = "/openid/v1/jwks";

class IssuerDiscovery {
 public:
  // `issuer`: the tokens' iss; `groups`: the groups allowed to read (system:authenticated in it
  // allows every authenticated user, as a binding to that group does).
  IssuerDiscovery(const ServiceAccountKey& key, std::string_view issuer,
                  std::set<std::string> groups);

  // Whether `path` is one of the two documents.
  static bool serves(std::string_view path);

  // The answer to `method` on `path` for `who`: 403 Status (the authorizer's, with the verb
  // as the lower-case method) unless allowed; then go-restful's 405 for a method other than GET
  // and 406 for an Accept naming neither */* nor the document's media type; else 200 and the
  // document.
  // REQUIRES: serves(path); who authenticated.
  Reply serve(std::string_view method, std::string_view path, std::string_view accept,
              const Identity& who) const;

  const std::string& configuration() const { return configuration_; }
  const std::string& jwks() const { return jwks_; }

 private:
  bool allowed(std::string_view verb, const Identity& who) const;

  std::string configuration_;
  std::string jwks_;
  std::set<std::string> groups_;
};

}  // namespace yurthub::fake
