// Kept and fake service-account tokens; see token_keeper.h.
#include "cache/token_keeper.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <charconv>
#include <ctime>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/base64.h"
#include "base/json_parse.h"
#include "base/log.h"
#include "cache/offline_apply.h"
#include "kube/bearer_token.h"
#include "kube/protobuf_wire.h"
#include "net/tls.h"

namespace yurthub::cache {
namespace {

constexpr std::size_t kMaxAnswerBytes = 64 * 1024;
// A kept token is served only while it is valid for at least this long.
constexpr std::int64_t kValidityMargin = 30;
// How long a fake token claims to be valid: kubelet asks again well before, so once the cloud is
// back the pod gets a real token within a minute.
constexpr std::int64_t kFakeLifetime = 60;

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void put(Writer& w, const std::string& s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

std::string member_string(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(name);
  return it != object.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

std::optional<TokenRequestKey> key_from_json(std::string_view body) {
  rapidjson::Document doc;
  if (!base::parse_json(body, doc) || !doc.IsObject() || !doc.HasMember("spec") ||
      !doc["spec"].IsObject()) {
    return std::nullopt;
  }
  const auto& spec = doc["spec"];
  TokenRequestKey key;
  if (auto it = spec.FindMember("audiences"); it != spec.MemberEnd() && it->value.IsArray()) {
    for (const auto& a : it->value.GetArray()) {
      if (a.IsString()) key.audiences.emplace_back(a.GetString());
    }
  }
  if (auto it = spec.FindMember("expirationSeconds");
      it != spec.MemberEnd() && it->value.IsInt64()) {
    key.expiration_seconds = it->value.GetInt64();
  }
  if (auto it = spec.FindMember("boundObjectRef"); it != spec.MemberEnd()) {
    key.bound_kind = member_string(it->value, "kind");
    key.bound_api_version = member_string(it->value, "apiVersion");
    key.bound_name = member_string(it->value, "name");
    key.bound_uid = member_string(it->value, "uid");
  }
  return key;
}

std::optional<TokenRequestKey> key_from_protobuf(std::string_view body) {
  auto envelope = kube::unwrap_protobuf(body);
  if (!envelope) return std::nullopt;
  auto fields = kube::decode_token_request(envelope->raw);
  if (!fields) return std::nullopt;
  TokenRequestKey key;
  key.audiences = std::move(fields->audiences);
  key.expiration_seconds = fields->expiration_seconds.value_or(0);
  key.bound_kind = fields->bound_kind.value_or("");
  key.bound_api_version = fields->bound_api_version.value_or("");
  key.bound_name = fields->bound_name.value_or("");
  key.bound_uid = fields->bound_uid.value_or("");
  return key;
}

// The stored value: "<expiry seconds>\n<the apiserver's JSON>".
std::optional<std::pair<std::int64_t, std::string_view>> split_kept(std::string_view value) {
  const auto newline = value.find('\n');
  if (newline == std::string_view::npos) return std::nullopt;
  std::int64_t expires = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + newline, expires);
  if (ec != std::errc() || end != value.data() + newline) return std::nullopt;
  return std::make_pair(expires, value.substr(newline + 1));
}

class TokenTap final : public hub::ResponseTap {
 public:
  TokenTap(std::function<void(std::string)> done) : done_(std::move(done)) {}
  void body(std::string_view bytes) override {
    if (body_.size() + bytes.size() > kMaxAnswerBytes) not_kept_ = true;
    if (!not_kept_) body_.append(bytes);
  }
  // A TokenRequest's answer is one object, never a watch: anything else is not kept.
  void event(std::string_view) override { not_kept_ = true; }
  void events_done() override {}
  void unframeable(std::string_view) override { not_kept_ = true; }
  void end(bool complete) override {
    if (complete && !not_kept_) done_(std::move(body_));
  }
  bool failed() const override { return false; }

 private:
  std::function<void(std::string)> done_;
  std::string body_;
  bool not_kept_ = false;  // too big, or not a single object
};

// The fake token's JWT claims: those of a bound service-account token, from a placeholder issuer.
std::string fake_claims(const TokenRequestKey& key, std::int64_t now, std::int64_t expires) {
  rapidjson::StringBuffer claims;
  Writer w(claims);
  w.StartObject();
  w.Key("aud");
  w.StartArray();
  for (const auto& a : key.audiences) put(w, a);
  w.EndArray();
  w.Key("exp");
  w.Int64(expires);
  w.Key("iat");
  w.Int64(now);
  // Not the cluster's issuer: no apiserver accepts this token, and anyone reading it sees why.
  w.Key("iss");
  w.String("yurthub-offline-placeholder");
  w.Key("kubernetes.io");
  w.StartObject();
  w.Key("namespace");
  put(w, key.namespace_name);
  w.Key("pod");
  w.StartObject();
  w.Key("name");
  put(w, key.bound_name);
  w.Key("uid");
  put(w, key.bound_uid);
  w.EndObject();
  w.Key("serviceaccount");
  w.StartObject();
  w.Key("name");
  put(w, key.service_account);
  w.EndObject();
  w.EndObject();
  w.Key("nbf");
  w.Int64(now);
  w.Key("sub");
  put(w, "system:serviceaccount:" + key.namespace_name + ":" + key.service_account);
  w.EndObject();
  return std::string(claims.GetString(), claims.GetSize());
}

// An HS256 JWT of `claims`, signed with `key`.
std::string sign_hs256(const std::string& claims, const std::string& key) {
  const std::string signing_input = base::encode_base64url(R"({"alg":"HS256","typ":"JWT"})") + "." +
                                    base::encode_base64url(claims);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size(), mac,
       &mac_length);
  return signing_input + "." +
         base::encode_base64url({reinterpret_cast<const char*>(mac), mac_length});
}

// The TokenRequest kubelet gets back: its own request's spec, `jwt` in the status.
std::string token_request_answer(const TokenRequestKey& key, const std::string& jwt,
                                 std::int64_t expires) {
  rapidjson::StringBuffer out;
  Writer w(out);
  w.StartObject();
  w.Key("kind");
  w.String("TokenRequest");
  w.Key("apiVersion");
  w.String("authentication.k8s.io/v1");
  w.Key("metadata");
  w.StartObject();
  w.Key("name");
  put(w, key.service_account);
  w.Key("namespace");
  put(w, key.namespace_name);
  w.Key("creationTimestamp");
  w.Null();
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  w.Key("audiences");
  w.StartArray();
  for (const auto& a : key.audiences) put(w, a);
  w.EndArray();
  if (key.expiration_seconds > 0) {
    w.Key("expirationSeconds");
    w.Int64(key.expiration_seconds);
  }
  w.Key("boundObjectRef");
  w.StartObject();
  w.Key("kind");
  put(w, key.bound_kind);
  w.Key("apiVersion");
  put(w, key.bound_api_version);
  w.Key("name");
  put(w, key.bound_name);
  w.Key("uid");
  put(w, key.bound_uid);
  w.EndObject();
  w.EndObject();
  w.Key("status");
  w.StartObject();
  w.Key("token");
  put(w, jwt);
  w.Key("expirationTimestamp");
  put(w, kube::format_time(expires, 0, false));
  w.EndObject();
  w.EndObject();
  return std::string(out.GetString(), out.GetSize());
}

}  // namespace

// When a JWT expires: its `exp` claim. kube-apiserver extends kubelet's 3607 s tokens to a year
// (--service-account-extend-token-expiration) while status.expirationTimestamp still says 3607 s,
// so the claim, not the status, says how long a kept token stays good.
std::optional<std::int64_t> jwt_expiry(std::string_view token) {
  auto claims = kube::read_jwt_claims(token);
  return claims ? claims->expires : std::nullopt;
}

std::optional<std::int64_t> parse_rfc3339(std::string_view text) {
  std::tm tm{};
  int consumed = 0;
  const std::string s(text);
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return std::nullopt;
  }
  std::string_view rest = text.substr(static_cast<std::size_t>(consumed));
  if (rest.starts_with('.')) {
    rest.remove_prefix(1);
    while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') rest.remove_prefix(1);
  }
  if (rest != "Z") return std::nullopt;  // the apiserver always writes UTC
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<std::int64_t>(timegm(&tm));
}

std::string TokenRequestKey::digest() const {
  std::string text;
  auto add = [&](std::string_view part) {
    text += std::to_string(part.size());
    text += ':';
    text += part;
  };
  for (std::string_view part : {std::string_view(component), std::string_view(namespace_name),
                                std::string_view(service_account)}) {
    add(part);
  }
  add(std::to_string(audiences.size()));
  for (const std::string& a : audiences) add(a);
  add(std::to_string(expiration_seconds));
  for (std::string_view part : {std::string_view(bound_kind), std::string_view(bound_api_version),
                                std::string_view(bound_name), std::string_view(bound_uid)}) {
    add(part);
  }
  unsigned char hash[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), hash, &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "token/";
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[hash[i] >> 4];
    out += kHex[hash[i] & 15];
  }
  return out;
}

std::optional<TokenRequestKey> read_token_request(const kube::RequestInfo& info,
                                                  std::string_view content_type,
                                                  std::string_view body) {
  if (info.resource != "serviceaccounts" || info.subresource != "token" || info.name.empty()) {
    return std::nullopt;
  }
  const std::string type = media_type(content_type);
  auto key = type == kube::kProtobufMediaType ? key_from_protobuf(body)
             : type == "application/json"     ? key_from_json(body)
                                              : std::nullopt;
  if (!key) return std::nullopt;
  key->component = info.component;
  key->namespace_name = info.namespace_name;
  key->service_account = info.name;
  return key;
}

TokenKeeper::TokenKeeper(Store& store, CacheWriter& writer, base::MetricsRegistry& registry,
                         base::UnixSeconds now)
    : store_(store),
      writer_(writer),
      now_(std::move(now)),
      fake_key_([] {
        auto key = net::random_token();
        return key ? std::move(*key) : std::string("yurthub-offline");
      }()),
      answers_(registry.counter("node_yurthub_offline_token_requests_total",
                                "TokenRequests answered while offline, by answer: kept (the "
                                "apiserver's token, kept from before) or fake (a placeholder that "
                                "no apiserver accepts, so the pod can start).",
                                {"answer"})),
      kept_(registry.counter("node_yurthub_tokens_kept_total",
                             "Service-account tokens kept from the apiserver's answers to cache "
                             "agents' TokenRequests, by outcome (kept, unreadable, store_error).",
                             {"outcome"})) {}

std::unique_ptr<hub::ResponseTap> TokenKeeper::tap(
    const TokenRequestKey& key, std::function<void(std::string_view token)> issued) {
  return std::make_unique<TokenTap>(
      [this, digest = key.digest(), issued = std::move(issued)](const std::string& body) {
        rapidjson::Document doc;
        const bool readable = static_cast<bool>(base::parse_json(body, doc));
        const rapidjson::Value* status =
            doc.IsObject() && doc.HasMember("status") ? &doc["status"] : nullptr;
        const std::string token = status ? member_string(*status, "token") : "";
        auto expires = jwt_expiry(token);
        if (!expires && status)
          expires = parse_rfc3339(member_string(*status, "expirationTimestamp"));
        if (!readable || token.empty() || !expires) {
          kept_.with({"unreadable"}).inc();
          return;
        }
        keep(digest, body, *expires);
        if (issued) issued(token);
      });
}

void TokenKeeper::keep(const std::string& digest, const std::string& json, std::int64_t expires) {
  const std::int64_t now = now_();
  CacheWriter::Task task =
      [digest, now, value = std::to_string(expires) + "\n" + json](WriteTxn& txn) -> Status {
    // Expired answers go; past the bound, those that expire first.
    std::vector<std::pair<std::int64_t, std::string>> kept;
    txn.scan_secrets(Secrets::KeptTokens, [&](std::string_view key, std::string_view stored) {
      auto parsed = split_kept(stored);
      kept.emplace_back(parsed ? parsed->first : 0, std::string(key));
      return true;
    });
    std::sort(kept.begin(), kept.end());
    std::size_t remaining = kept.size();
    for (const auto& [expiry, key] : kept) {
      if (expiry > now && remaining < kMaxKept) break;
      if (Status s = txn.delete_secret(Secrets::KeptTokens, key); !s) return s;
      --remaining;
    }
    return txn.put_secret(Secrets::KeptTokens, digest, value);
  };
  writer_.run_exclusive(std::move(task), [this](const Status& status) {
    if (status) {
      kept_.with({"kept"}).inc();
      return;
    }
    kept_.with({"store_error"}).inc();
    YH_LOG(Error) << "cache: cannot keep a service-account token: " << status.error().message;
  });
}

TokenKeeper::Answer TokenKeeper::answer(const TokenRequestKey& key) {
  if (auto stored = store_.read()->secret(Secrets::KeptTokens, key.digest())) {
    if (auto parsed = split_kept(*stored); parsed && parsed->first > now_() + kValidityMargin) {
      answers_.with({"kept"}).inc();
      return Answer{std::string(parsed->second), true};
    }
  }
  answers_.with({"fake"}).inc();
  return Answer{fake(key), false};
}

std::string TokenKeeper::fake(const TokenRequestKey& key) const {
  const std::int64_t now = now_();
  const std::int64_t expires = now + kFakeLifetime;
  const std::string jwt = sign_hs256(fake_claims(key, now, expires), fake_key_);
  return token_request_answer(key, jwt, expires);
}

}  // namespace yurthub::cache
