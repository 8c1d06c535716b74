// The TokenRequest subresource (POST .../serviceaccounts/<name>/token), as a v1.26 apiserver
// answers it (pkg/registry/core/serviceaccount/storage/token.go): the service account and the
// bound pod must exist (404), the pod's uid must match (409); audiences default to the API's;
// expirationSeconds defaults to 3600 and may not be under 600 (422). A kubelet-style request
// (3607 s, bound to a pod, the API audience) gets a token valid for a year while
// status.expirationTimestamp says 3607 s (--service-account-extend-token-expiration, on by
// default). The token is the apiserver's JWT: its claims (the service account's and the bound
// pod's uids as stored) signed RS256 with the fake's service-account key (service_account_key.h),
// which service_account_token.cc verifies when the token comes back. JSON bodies only, like the
// rest of this fake.
#include <chrono>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "test/fake_apiserver/api_handlers.h"
#include "test/fake_apiserver/json_util.h"
#include "test/fake_apiserver/service_account_token.h"

namespace yurthub::fake {
namespace {

constexpr std::string_view kApiAudience = kServiceAccountIssuer;  // --api-audiences' default
constexpr std::int64_t kWarnOnlyBoundTokenSeconds =
    3607;  // token.WarnOnlyBoundTokenExpirationSeconds
constexpr std::int64_t kExtendedSeconds = 365 * 24 * 3600;  // token.ExpirationExtensionSeconds

std::string rfc3339(std::int64_t unix) {
  const std::time_t t = static_cast<std::time_t>(unix);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string member(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(name);
  return it != object.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

}  // namespace

Reply ApiHandlers::token_request(const ApiRequest& req) {
  auto doc = parse_json(req.body);
  if (!doc || !doc->IsObject()) {
    return bad_request(
        "the body of the request was in an unknown format - accepted media types "
        "include: application/json, application/yaml");
  }
  if (service_account_key_ == nullptr) return internal_error("no service-account signing key");
  const StoredObject* account = store_.get(req.resource->key(), req.path.ns, req.path.name);
  if (account == nullptr) {
    return not_found("serviceaccounts", "", "serviceaccounts", req.path.name);
  }
  auto stored_account = parse_json(*account->json);
  const std::string account_uid = stored_account ? meta_string(*stored_account, "uid") : "";
  rapidjson::Value empty(rapidjson::kObjectType);
  const rapidjson::Value& spec =
      doc->HasMember("spec") && (*doc)["spec"].IsObject() ? (*doc)["spec"] : empty;
  std::vector<std::string> audiences;
  if (spec.HasMember("audiences") && spec["audiences"].IsArray()) {
    for (const auto& a : spec["audiences"].GetArray()) {
      if (a.IsString()) audiences.emplace_back(a.GetString());
    }
  }
  if (audiences.empty()) audiences.emplace_back(kApiAudience);
  std::int64_t seconds = 3600;
  if (spec.HasMember("expirationSeconds") && spec["expirationSeconds"].IsInt64()) {
    seconds = spec["expirationSeconds"].GetInt64();
  }
  if (seconds < 600) {
    return invalid("TokenRequest", "",
                   "spec.expirationSeconds: Invalid value: " + std::to_string(seconds) +
                       ": may not specify a duration less than 10 minutes");
  }
  const rapidjson::Value& ref = spec.HasMember("boundObjectRef") ? spec["boundObjectRef"] : empty;
  const std::string pod_name = member(ref, "name");
  const std::string ref_uid = member(ref, "uid");
  const bool bound_to_pod = member(ref, "kind") == "Pod" && !pod_name.empty();
  std::string pod_uid;  // the claim carries the stored pod's uid, whatever the request said
  if (bound_to_pod) {
    const StoredObject* pod = store_.get("/pods", req.path.ns, pod_name);
    if (pod == nullptr) return not_found("pods", "", "pods", pod_name);
    auto stored = parse_json(*pod->json);
    if (stored) pod_uid = meta_string(*stored, "uid");
    if (!ref_uid.empty() && pod_uid != ref_uid) {
      return conflict_message("pods", "", "pods", pod_name,
                              "the UID in the bound object reference (" + ref_uid +
                                  ") does not match the UID in record. The object might have "
                                  "been deleted and then recreated");
    }
  }
  const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  const bool extended = bound_to_pod && seconds == kWarnOnlyBoundTokenSeconds &&
                        audiences.size() == 1 && audiences[0] == kApiAudience;
  const std::int64_t token_exp = now + (extended ? kExtendedSeconds : seconds);

  rapidjson::StringBuffer claims;
  {
    rapidjson::Writer<rapidjson::StringBuffer> w(claims);
    w.StartObject();
    w.Key("aud");
    w.StartArray();
    for (const auto& a : audiences) w.String(a);
    w.EndArray();
    w.Key("exp");
    w.Int64(token_exp);
    w.Key("iat");
    w.Int64(now);
    w.Key("iss");
    w.String(kApiAudience.data());
    w.Key("kubernetes.io");
    w.StartObject();
    w.Key("namespace");
    w.String(req.path.ns);
    if (bound_to_pod) {
      w.Key("pod");
      w.StartObject();
      w.Key("name");
      w.String(pod_name);
      w.Key("uid");
      w.String(pod_uid);
      w.EndObject();
    }
    w.Key("serviceaccount");
    w.StartObject();
    w.Key("name");
    w.String(req.path.name);
    if (!account_uid.empty()) {  // ref's `json:"uid,omitempty"`
      w.Key("uid");
      w.String(account_uid);
    }
    w.EndObject();
    if (extended) {
      w.Key("warnafter");
      w.Int64(now + seconds);
    }
    w.EndObject();
    w.Key("nbf");
    w.Int64(now);
    w.Key("sub");
    w.String("system:serviceaccount:" + req.path.ns + ":" + req.path.name);
    w.EndObject();
  }
  const std::string token =
      service_account_key_->sign(std::string_view(claims.GetString(), claims.GetSize()));

  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  w.Key("kind");
  w.String("TokenRequest");
  w.Key("apiVersion");
  w.String("authentication.k8s.io/v1");
  w.Key("metadata");
  w.StartObject();
  w.Key("name");
  w.String(req.path.name);
  w.Key("namespace");
  w.String(req.path.ns);
  w.Key("creationTimestamp");
  w.String(rfc3339(now));
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  w.Key("audiences");
  w.StartArray();
  for (const auto& a : audiences) w.String(a);
  w.EndArray();
  w.Key("expirationSeconds");
  w.Int64(seconds);
  if (ref.IsObject() && ref.MemberCount() > 0) {
    w.Key("boundObjectRef");
    ref.Accept(w);
  }
  w.EndObject();
  w.Key("status");
  w.StartObject();
  w.Key("token");
  w.String(token);
  w.Key("expirationTimestamp");
  w.String(rfc3339(now + seconds));
  w.EndObject();
  w.EndObject();
  return Reply{201, "application/json", std::string(out.GetString(), out.GetSize())};
}

}  // namespace yurthub::fake
