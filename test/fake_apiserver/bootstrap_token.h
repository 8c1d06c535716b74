// Bootstrap tokens (k8s.io/cluster-bootstrap) in the fake: the token format `<id>.<secret>`, the
// Secret kube-system/bootstrap-token-<id> of type bootstrap.kubernetes.io/token that holds one,
// kube-apiserver's bootstrap token authenticator (plugin/pkg/auth/authenticator/token/bootstrap)
// and the detached JWS that kube-controller-manager's bootstrap signer writes into cluster-info
// (token/jws). Router calls authenticate_bootstrap_token() per request; cluster_info.cc calls
// signing_tokens() and detached_jws(). Reads the Store; single-threaded like it.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "test/fake_apiserver/auth.h"
#include "test/fake_apiserver/store.h"

namespace yurthub::fake {

using SystemTime = std::chrono::system_clock::time_point;

struct BootstrapToken {
  std::string id;      // [a-z0-9]{6}
  std::string secret;  // [a-z0-9]{16}
};

// `[a-z0-9]{6}.[a-z0-9]{16}`, else nullopt (bootstraptokenutil.ParseToken).
std::optional<BootstrapToken> parse_bootstrap_token(std::string_view token);

// A Secret's `data`, base64-decoded; values that are not base64 are left out.
std::map<std::string, std::string> secret_data(const rapidjson::Value& secret);

// Go's time.Parse(time.RFC3339, s): "2006-01-02T15:04:05Z07:00", fractional seconds allowed.
std::optional<SystemTime> parse_rfc3339(std::string_view s);

// The bootstrap authenticator: user system:bootstrap:<id>, groups system:bootstrappers plus
// auth-extra-groups (sorted, deduplicated). nullopt if `token` is not of the bootstrap form or
// the Secret is missing, of another type, holds another secret or id, has expired (an
// unparseable expiration counts as expired), lacks usage-bootstrap-authentication=true or names
// an extra group outside system:bootstrappers:*.
std::optional<Identity> authenticate_bootstrap_token(const Store& store, std::string_view token,
                                                     SystemTime now);

// id → secret of every unexpired bootstrap-token Secret in kube-system with
// usage-bootstrap-signing=true whose name matches its token-id (validateSecretForSigning).
std::map<std::string, std::string> signing_tokens(const Store& store, SystemTime now);

// jws.ComputeDetachedSignature: the compact HS256 JWS of `content` with protected header
// {"alg":"HS256","kid":"<id>"}, keyed with the token secret, payload removed:
// "<header>..<signature>" (base64url without padding).
std::string detached_jws(std::string_view content, std::string_view token_id,
                         std::string_view token_secret);

}  // namespace yurthub::fake
