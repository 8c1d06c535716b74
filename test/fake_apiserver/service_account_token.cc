// The service-account token authenticator; see service_account_token.h.
#include "test/fake_apiserver/service_account_token.h"

#include <cstdint>
#include <string>

#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake {
namespace {

constexpr std::int64_t kLeewaySeconds = 60;  // go-jose jwt.DefaultLeeway

std::string string_member(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(name);
  return it != object.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

// A NumericDate claim, as go-jose reads it (a JSON number, fractions dropped); nullopt if absent.
// `bad` is set when present but not a number.
std::optional<std::int64_t> date_member(const rapidjson::Value& claims, const char* name,
                                        bool& bad) {
  auto it = claims.FindMember(name);
  if (it == claims.MemberEnd()) return std::nullopt;
  if (!it->value.IsNumber()) {
    bad = true;
    return std::nullopt;
  }
  if (it->value.IsInt64()) return it->value.GetInt64();
  return static_cast<std::int64_t>(it->value.GetDouble());
}

// `aud` is a string or an array of strings (go-jose's jwt.Audience); the token must name the
// apiserver's audience (jwtTokenAuthenticator's intersection with its implicit audiences).
bool names_api_audience(const rapidjson::Value& claims) {
  auto it = claims.FindMember("aud");
  if (it == claims.MemberEnd()) return false;
  if (it->value.IsString()) return it->value.GetString() == kServiceAccountIssuer;
  if (!it->value.IsArray()) return false;
  for (const auto& a : it->value.GetArray()) {
    if (a.IsString() && a.GetString() == kServiceAccountIssuer) return true;
  }
  return false;
}

// jwt.Claims.ValidateWithLeeway: not before nbf, not after exp, not issued in the future.
bool in_time(const rapidjson::Value& claims, std::int64_t now) {
  bool bad = false;
  auto nbf = date_member(claims, "nbf", bad);
  auto exp = date_member(claims, "exp", bad);
  auto iat = date_member(claims, "iat", bad);
  if (bad) return false;
  if (nbf && now + kLeewaySeconds < *nbf) return false;
  if (exp && now - kLeewaySeconds > *exp) return false;
  if (iat && now + kLeewaySeconds < *iat) return false;
  return true;
}

// The validator's liveness checks: the object `ref` names ({"name","uid"}) exists in `ns` with
// that uid (a deleted and recreated pod or service account invalidates the token).
bool still_exists(const Store& store, const char* resource, const std::string& ns,
                  const rapidjson::Value& ref) {
  const std::string name = string_member(ref, "name");
  if (name.empty()) return false;
  const StoredObject* obj = store.get(resource, ns, name);
  if (obj == nullptr) return false;
  auto doc = parse_json(*obj->json);
  return doc && doc->IsObject() && meta_string(*doc, "uid") == string_member(ref, "uid");
}

}  // namespace

std::optional<Identity> authenticate_service_account_token(
    const Store& store, const ServiceAccountKey& key, std::string_view token,
    std::chrono::system_clock::time_point now) {
  auto text = key.verify(token);
  if (!text) return std::nullopt;
  auto claims = parse_json(*text);
  if (!claims || !claims->IsObject()) return std::nullopt;
  // Another issuer's token is not this authenticator's (hasCorrectIssuer).
  if (string_member(*claims, "iss") != kServiceAccountIssuer) return std::nullopt;
  if (!names_api_audience(*claims)) return std::nullopt;
  const std::int64_t unix_now =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  if (!in_time(*claims, unix_now)) return std::nullopt;
  auto k8s = claims->FindMember("kubernetes.io");
  if (k8s == claims->MemberEnd() || !k8s->value.IsObject()) return std::nullopt;
  const rapidjson::Value& priv = k8s->value;
  const std::string ns = string_member(priv, "namespace");
  auto sa = priv.FindMember("serviceaccount");
  if (ns.empty() || sa == priv.MemberEnd() ||
      !still_exists(store, "/serviceaccounts", ns, sa->value)) {
    return std::nullopt;
  }
  auto pod = priv.FindMember("pod");
  if (pod != priv.MemberEnd() && !still_exists(store, "/pods", ns, pod->value)) {
    return std::nullopt;
  }
  auto secret = priv.FindMember("secret");
  if (secret != priv.MemberEnd() && !still_exists(store, "/secrets", ns, secret->value)) {
    return std::nullopt;
  }
  // ServiceAccountInfo.UserInfo(): the pod name/uid extras are left out (Identity has none).
  const std::string name = string_member(sa->value, "name");
  return Identity{"system:serviceaccount:" + ns + ":" + name,
                  string_member(sa->value, "uid"),
                  {"system:serviceaccounts", "system:serviceaccounts:" + ns}};
}

}  // namespace yurthub::fake
