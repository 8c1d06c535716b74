// Service-account issuer discovery; see issuer_discovery.h.
#include "test/fake_apiserver/issuer_discovery.h"

#include <algorithm>
#include <cctype>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace yurthub::fake {
namespace {

constexpr std::string_view kJsonType = "application/json";
constexpr std::string_view kJwksType = "application/jwk-set+json";  // RFC 7517 section 8.5.1
constexpr const char* kCacheControl = "public, max-age=3600";       // routes' fromStandard
constexpr const char* kTextType = "text/plain; charset=utf-8";

void string_array(rapidjson::Writer<rapidjson::StringBuffer>& w, const char* key,
                  const char* value) {
  w.Key(key);
  w.StartArray();
  w.String(value);
  w.EndArray();
}

// openIDMetadata marshalled: issuer, jwks_uri (the issuer's URL with the JWKS path), the
// response, subject and signing algorithm lists.
std::string configuration_document(std::string_view issuer) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  w.Key("issuer");
  w.String(issuer.data(), static_cast<rapidjson::SizeType>(issuer.size()));
  w.Key("jwks_uri");
  w.String(std::string(issuer) + std::string(kJwksPath));
  string_array(w, "response_types_supported", "id_token");
  string_array(w, "subject_types_supported", "public");
  string_array(w, "id_token_signing_alg_values_supported", "RS256");
  w.EndObject();
  return std::string(out.GetString(), out.GetSize());
}

// go-restful's Route.matchesAccept: some comma-separated media range, parameters dropped and
// trimmed, is */* or exactly `produced` (an absent Accept counts as */*).
bool accepts(std::string_view accept, std::string_view produced) {
  if (accept.empty()) return true;
  while (true) {
    const auto comma = accept.find(',');
    std::string_view type = accept.substr(0, comma);
    type = type.substr(0, type.find(';'));
    while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.remove_prefix(1);
    while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
    if (type == "*/*" || type == produced) return true;
    if (comma == std::string_view::npos) return false;
    accept.remove_prefix(comma + 1);
  }
}

}  // namespace

IssuerDiscovery::IssuerDiscovery(const ServiceAccountKey& key, std::string_view issuer,
                                 std::set<std::string> groups)
    : configuration_(configuration_document(issuer)),
      jwks_(R"({"keys":[)" + key.public_jwk() + "]}"),
      groups_(std::move(groups)) {}

bool IssuerDiscovery::serves(std::string_view path) {
  return path == kOpenIdConfigurationPath || path == kJwksPath;
}

bool IssuerDiscovery::allowed(std::string_view verb, const Identity& who) const {
  const auto& g = who.groups;
  // The privileged-groups authorizer in front of Node and RBAC.
  if (std::find(g.begin(), g.end(), "system:masters") != g.end()) return true;
  if (verb != "get") return false;  // the ClusterRole grants get only
  if (groups_.count("system:authenticated") > 0) return true;
  return std::any_of(g.begin(), g.end(), [&](const std::string& x) { return groups_.count(x); });
}

Reply IssuerDiscovery::serve(std::string_view method, std::string_view path,
                             std::string_view accept, const Identity& who) const {
  std::string verb(method);
  for (char& c : verb) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!allowed(verb, who)) return forbidden_path(who.user, verb, path);
  // go-restful v3.9's route errors (a body without Content-Type: Go sniffs it as text).
  if (verb != "get") {
    return Reply{405, kTextType, "405: Method Not Allowed", {{"Allow", "GET"}}};
  }
  const bool is_jwks = path == kJwksPath;
  const std::string type(is_jwks ? kJwksType : kJsonType);
  if (!accepts(accept, type)) {
    return Reply{406, kTextType, "406: Not Acceptable\n\nAvailable representations: " + type};
  }
  return Reply{200, type, is_jwks ? jwks_ : configuration_, {{"Cache-Control", kCacheControl}}};
}

}  // namespace yurthub::fake
