// Bootstrap tokens; see bootstrap_token.h.
#include "test/fake_apiserver/bootstrap_token.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <set>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "base/base64.h"
#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake {
namespace {

constexpr const char* kSecretsKey = "/secrets";
constexpr const char* kNamespace = "kube-system";
constexpr std::string_view kSecretType = "bootstrap.kubernetes.io/token";
constexpr std::string_view kNamePrefix = "bootstrap-token-";

bool lower_alnum(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

// util/tokens ValidateBootstrapGroupName: ^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$.
bool valid_extra_group(std::string_view g) {
  constexpr std::string_view kPrefix = "system:bootstrappers:";
  if (!g.starts_with(kPrefix)) return false;
  std::string_view rest = g.substr(kPrefix.size());
  if (rest.empty() || rest.size() > 256 || !lower_alnum(rest.substr(rest.size() - 1))) return false;
  return std::all_of(rest.begin(), rest.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ':' || c == '-';
  });
}

std::string type_of(const rapidjson::Value& secret) {
  auto it = secret.FindMember("type");
  return it != secret.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

bool expired(const std::map<std::string, std::string>& data, SystemTime now) {
  auto it = data.find("expiration");
  if (it == data.end() || it->second.empty()) return false;
  auto when = parse_rfc3339(it->second);
  return !when || *when <= now;  // unparseable: treated as expired
}

std::string value(const std::map<std::string, std::string>& data, const char* key) {
  auto it = data.find(key);
  return it == data.end() ? "" : it->second;
}

int digits(std::string_view s, std::size_t at, std::size_t n, bool& ok) {
  int v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) {
      ok = false;
      return 0;
    }
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

std::optional<BootstrapToken> parse_bootstrap_token(std::string_view token) {
  if (token.size() != 23 || token[6] != '.') return std::nullopt;
  std::string_view id = token.substr(0, 6), secret = token.substr(7);
  if (!lower_alnum(id) || !lower_alnum(secret)) return std::nullopt;
  return BootstrapToken{std::string(id), std::string(secret)};
}

std::map<std::string, std::string> secret_data(const rapidjson::Value& secret) {
  std::map<std::string, std::string> out;
  if (!secret.IsObject()) return out;
  auto data = secret.FindMember("data");
  if (data == secret.MemberEnd() || !data->value.IsObject()) return out;
  for (const auto& m : data->value.GetObject()) {
    if (!m.value.IsString()) continue;
    auto decoded = base::decode_base64({m.value.GetString(), m.value.GetStringLength()});
    if (decoded) out[m.name.GetString()] = *decoded;
  }
  return out;
}

std::optional<SystemTime> parse_rfc3339(std::string_view s) {
  bool ok = true;
  std::tm tm{};
  tm.tm_year = digits(s, 0, 4, ok) - 1900;
  tm.tm_mon = digits(s, 5, 2, ok) - 1;
  tm.tm_mday = digits(s, 8, 2, ok);
  tm.tm_hour = digits(s, 11, 2, ok);
  tm.tm_min = digits(s, 14, 2, ok);
  tm.tm_sec = digits(s, 17, 2, ok);
  if (!ok || s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
      s[13] != ':' || s[16] != ':' || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
      tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 59) {
    return std::nullopt;
  }
  std::size_t i = 19;
  if (s[i] == '.') {  // fractional seconds: ignored (the comparison is to the second)
    ++i;
    std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == start) return std::nullopt;
  }
  long offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z') && i + 1 == s.size()) {
    offset = 0;
  } else if (i + 6 == s.size() && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
    int h = digits(s, i + 1, 2, ok), m = digits(s, i + 4, 2, ok);
    if (!ok || h > 23 || m > 59) return std::nullopt;
    offset = (s[i] == '-' ? -1 : 1) * (h * 3600L + m * 60L);
  } else {
    return std::nullopt;
  }
  return std::chrono::system_clock::from_time_t(timegm(&tm) - offset);
}

std::optional<Identity> authenticate_bootstrap_token(const Store& store, std::string_view token,
                                                     SystemTime now) {
  auto parsed = parse_bootstrap_token(token);
  if (!parsed) return std::nullopt;
  const StoredObject* obj =
      store.get(kSecretsKey, kNamespace, std::string(kNamePrefix) + parsed->id);
  if (obj == nullptr) return std::nullopt;
  auto secret = parse_json(*obj->json);
  if (!secret || !secret->IsObject() || type_of(*secret) != kSecretType) return std::nullopt;
  auto data = secret_data(*secret);
  // The authenticator's order: secret, id, expiry, usage, groups.
  const std::string stored = value(data, "token-secret");
  if (stored.size() != parsed->secret.size() ||
      CRYPTO_memcmp(stored.data(), parsed->secret.data(), stored.size()) != 0) {
    return std::nullopt;
  }
  if (value(data, "token-id") != parsed->id || expired(data, now)) return std::nullopt;
  if (value(data, "usage-bootstrap-authentication") != "true") return std::nullopt;
  std::set<std::string> groups = {"system:bootstrappers"};
  std::string extra = value(data, "auth-extra-groups");
  if (!extra.empty()) {
    std::size_t start = 0;
    while (true) {
      std::size_t comma = extra.find(',', start);
      std::string g = extra.substr(start, comma == std::string::npos ? comma : comma - start);
      if (!valid_extra_group(g)) return std::nullopt;
      groups.insert(g);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return Identity{"system:bootstrap:" + parsed->id, "", {groups.begin(), groups.end()}};
}

std::map<std::string, std::string> signing_tokens(const Store& store, SystemTime now) {
  std::map<std::string, std::string> out;
  ListOptions lo;
  lo.resource = kSecretsKey;
  lo.ns = kNamespace;
  for (const auto& json : store.list(lo).items) {
    auto secret = parse_json(*json);
    if (!secret || !secret->IsObject() || type_of(*secret) != kSecretType) continue;
    std::string name = meta_string(*secret, "name");
    std::string name_id = name.substr(std::min(name.size(), kNamePrefix.size()));
    if (!name.starts_with(kNamePrefix) || name_id.size() != 6 || !lower_alnum(name_id)) continue;
    auto data = secret_data(*secret);
    std::string id = value(data, "token-id"), token_secret = value(data, "token-secret");
    if (id.empty() || id != name_id || token_secret.empty() || expired(data, now)) continue;
    if (value(data, "usage-bootstrap-signing") != "true") continue;
    out.emplace(id, token_secret);
  }
  return out;
}

std::string detached_jws(std::string_view content, std::string_view token_id,
                         std::string_view token_secret) {
  // go-jose writes the protected header as a JSON object with sorted keys.
  std::string header =
      base::encode_base64url(R"({"alg":"HS256","kid":")" + std::string(token_id) + "\"}");
  std::string input = header + "." + base::encode_base64url(content);
  // ComputeDetachedSignature zero-pads a secret under 32 bytes to 32: HMAC pads keys to its
  // block size with zeros anyway, so the unpadded secret gives the same MAC.
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), token_secret.data(), static_cast<int>(token_secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &len);
  return header + ".." +
         base::encode_base64url(
             {reinterpret_cast<const char*>(mac), static_cast<std::size_t>(len)});
}

}  // namespace yurthub::fake
