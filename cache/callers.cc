// Whose credential a request carries; see callers.h.
#include "cache/callers.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/json_parse.h"
#include "base/log.h"
#include "cache/cached_copies.h"
#include "kube/bearer_token.h"
#include "net/tls.h"

namespace yurthub::cache {
namespace {

constexpr std::string_view kKeyName = "key";
constexpr std::string_view kRecordPrefix = "t:";

std::string hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 0xf];
  }
  return out;
}

std::string member(const rapidjson::Value& doc, const char* name) {
  auto it = doc.FindMember(name);
  return it != doc.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

// Stores a caller's record under `key`. Bounded: past Callers::kMaxRemembered, the expired go
// first, then those expiring soonest.
Status put_record(WriteTxn& txn, const std::string& key, const std::string& value,
                  std::int64_t now) {
  std::vector<std::pair<std::int64_t, std::string>> records;
  txn.scan_secrets(Secrets::Callers, [&](std::string_view k, std::string_view v) {
    if (!k.starts_with(kRecordPrefix)) return true;
    rapidjson::Document doc;
    std::int64_t expires = 0;
    if (base::parse_json(v, doc) && doc.IsObject() && doc.HasMember("expires") &&
        doc["expires"].IsInt64())
      expires = doc["expires"].GetInt64();
    records.emplace_back(expires == 0 ? INT64_MAX : expires, std::string(k));
    return true;
  });
  std::sort(records.begin(), records.end());
  std::size_t keep = records.size();
  for (const auto& [expires, k] : records) {
    if (keep < Callers::kMaxRemembered && expires > now) break;
    if (Status s = txn.delete_secret(Secrets::Callers, k); !s) return s;
    --keep;
  }
  return txn.put_secret(Secrets::Callers, key, value);
}

}  // namespace

Result<std::string> Callers::load_key(Store& store) {
  if (auto key = store.read()->secret(Secrets::Callers, kKeyName); key && key->size() >= 32)
    return *key;
  auto fresh = net::random_token();
  if (!fresh) return fresh.error();
  const std::string key = *fresh;
  // No key: a new cache, or one a hub wrote before it recorded owners, whose sets may hold what a
  // caller's own token obtained. Those are dropped, not given to the node; their clients list
  // again (a watch resuming a list the cache lacks is ended with 410 Expired: NodeCache::tap).
  std::size_t dropped = 0;
  if (Status s = store.write([&](WriteTxn& txn) -> Status {
        for (const auto& [identity, record] : txn.lists_with_prefix("")) {
          for (std::uint32_t set : {record.set_id, record.staging_id}) {
            if (set == 0) continue;
            if (Status dropped_set = txn.drop_set(set); !dropped_set) return dropped_set;
          }
          if (Status deleted = txn.delete_list(identity); !deleted) return deleted;
          ++dropped;
        }
        return txn.put_secret(Secrets::Callers, kKeyName, key);
      });
      !s) {
    return s.error();
  }
  if (dropped > 0) {
    YH_LOG(Warning) << "cache: " << dropped << " lists were written before the cache recorded "
                    << "whose credential obtained them; they are dropped, and cached again as "
                       "their clients list";
  }
  return key;
}

Callers::Callers(Store& store, CacheWriter& writer, base::MetricsRegistry& registry,
                 std::string key, base::UnixSeconds now, IssuerKeys* issuer_keys)
    : store_(store),
      writer_(writer),
      key_(std::move(key)),
      now_(std::move(now)),
      issuer_keys_(issuer_keys),
      verdicts_(registry.counter(
          "node_yurthub_offline_callers_total",
          "Offline requests by the identity they were served as (node, service_account, token) "
          "(service_account_signed: by the apiserver's keys) or why their bearer token was "
          "refused (unverifiable, expired, pod_gone).",
          {"verdict"})) {}

std::string Callers::digest(std::string_view token) const {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(token.data()), token.size(), mac, &length);
  return hex(mac, length);
}

std::string Callers::owner_of_token(std::string_view token, const std::string& digest) const {
  auto claims = kube::read_jwt_claims(token);
  if (claims && !claims->namespace_name.empty() && !claims->service_account.empty())
    return "sa:" + claims->namespace_name + "/" + claims->service_account;
  return "token:" + digest.substr(0, 32);
}

std::string Callers::owner_of(const kube::RequestInfo& info) const {
  if (!info.bearer_token) return {};
  return owner_of_token(*info.bearer_token, digest(*info.bearer_token));
}

void Callers::accepted(const kube::RequestInfo& info) {
  if (info.bearer_token) remember(*info.bearer_token);
}

void Callers::issued(std::string_view token) {
  remember(token);
  if (issuer_keys_ != nullptr) issuer_keys_->learn_audiences(token);
}

void Callers::remember(std::string_view token) {
  const std::string d = digest(token);
  Remembered r;
  r.owner = owner_of_token(token, d);
  if (auto claims = kube::read_jwt_claims(token)) {
    r.expires = claims->expires.value_or(0);
    if (!claims->pod_uid.empty()) {
      r.pod_namespace = claims->namespace_name;
      r.pod_name = claims->pod_name;
      r.pod_uid = claims->pod_uid;
    }
  }
  {
    std::lock_guard lock(mutex_);
    if (seen_.count(d) > 0) return;
    if (seen_.size() >= 2 * kMaxRemembered) seen_.clear();
    seen_.emplace(d, r);
  }
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("owner");
  w.String(r.owner.c_str(), static_cast<rapidjson::SizeType>(r.owner.size()));
  w.Key("expires");
  w.Int64(r.expires);
  w.Key("pod_namespace");
  w.String(r.pod_namespace.c_str(), static_cast<rapidjson::SizeType>(r.pod_namespace.size()));
  w.Key("pod_name");
  w.String(r.pod_name.c_str(), static_cast<rapidjson::SizeType>(r.pod_name.size()));
  w.Key("pod_uid");
  w.String(r.pod_uid.c_str(), static_cast<rapidjson::SizeType>(r.pod_uid.size()));
  w.EndObject();
  std::string key = std::string(kRecordPrefix) + d;
  std::string value(buffer.GetString(), buffer.GetSize());
  const std::int64_t now = now_();
  CacheWriter::Task task = [key = std::move(key), value = std::move(value),
                            now](WriteTxn& txn) -> Status {
    return put_record(txn, key, value, now);
  };
  writer_.run_exclusive(std::move(task), [](const Status& s) {
    if (!s)
      YH_LOG(Warning) << "cache: cannot remember a token the apiserver accepted: "
                      << s.error().message;
  });
}

std::optional<Callers::Remembered> Callers::lookup(const std::string& d) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = seen_.find(d); it != seen_.end()) return it->second;
  }
  auto stored = store_.read()->secret(Secrets::Callers, std::string(kRecordPrefix) + d);
  if (!stored) return std::nullopt;
  rapidjson::Document doc;
  if (!base::parse_json(*stored, doc) || !doc.IsObject()) return std::nullopt;
  Remembered r;
  r.owner = member(doc, "owner");
  if (doc.HasMember("expires") && doc["expires"].IsInt64()) r.expires = doc["expires"].GetInt64();
  r.pod_namespace = member(doc, "pod_namespace");
  r.pod_name = member(doc, "pod_name");
  r.pod_uid = member(doc, "pod_uid");
  if (r.owner.empty()) return std::nullopt;  // a token is never the node
  std::lock_guard lock(mutex_);
  if (seen_.size() < 2 * kMaxRemembered) seen_.emplace(d, r);
  return r;
}

namespace {

// Whether the node's own cache holds the pod (namespace, name) with this uid.
bool node_has_pod(Store& store, std::string_view namespace_name, std::string_view name,
                  std::string_view uid) {
  auto view = store.read();
  for (const CachedCopy& copy : find_copies(*view, {"", "v1", "pods", namespace_name, name})) {
    rapidjson::Document pod;
    if (!base::parse_json(copy.json, pod) || !pod.IsObject() || !pod.HasMember("metadata") ||
        !pod["metadata"].IsObject())
      continue;
    if (member(pod["metadata"], "uid") == uid) return true;
  }
  return false;
}

}  // namespace

std::variant<std::string, kube::ApiError> Callers::verify(const kube::RequestInfo& info) {
  if (!info.bearer_token) {
    verdicts_.with({"node"}).inc();
    return std::string();
  }
  auto r = lookup(digest(*info.bearer_token));
  if (!r && issuer_keys_ != nullptr) return verify_signature(*info.bearer_token);
  if (!r) {
    verdicts_.with({"unverifiable"}).inc();
    return kube::api_error(kube::Failure::Offline,
                           "the node cannot verify this bearer token while the apiserver is "
                           "unreachable: the apiserver never accepted it on this node");
  }
  if (r->expires != 0 && now_() >= r->expires) {
    verdicts_.with({"expired"}).inc();
    return kube::api_error(kube::Failure::Unauthorized, "the bearer token has expired");
  }
  if (!r->pod_uid.empty() && !node_has_pod(store_, r->pod_namespace, r->pod_name, r->pod_uid)) {
    verdicts_.with({"pod_gone"}).inc();
    return kube::api_error(kube::Failure::Unauthorized, "the bearer token is bound to pod " +
                                                            r->pod_namespace + "/" + r->pod_name +
                                                            ", which is not on this node");
  }
  verdicts_.with({r->owner.starts_with("sa:") ? "service_account" : "token"}).inc();
  return r->owner;
}

std::variant<std::string, kube::ApiError> Callers::verify_signature(std::string_view token) {
  auto claims = issuer_keys_->verify(token, now_());
  if (!claims && claims.error().code == ErrorCode::PermissionDenied) {
    verdicts_.with({"expired"}).inc();
    return kube::api_error(kube::Failure::Unauthorized, "the bearer token has expired");
  }
  if (!claims || claims->namespace_name.empty() || claims->service_account.empty()) {
    verdicts_.with({"unverifiable"}).inc();
    return kube::api_error(
        kube::Failure::Offline,
        "the node cannot verify this bearer token while the apiserver is unreachable: " +
            (claims ? std::string("it names no service account") : claims.error().message));
  }
  if (!claims->pod_uid.empty() &&
      !node_has_pod(store_, claims->namespace_name, claims->pod_name, claims->pod_uid)) {
    verdicts_.with({"pod_gone"}).inc();
    return kube::api_error(kube::Failure::Unauthorized,
                           "the bearer token is bound to pod " + claims->namespace_name + "/" +
                               claims->pod_name + ", which is not on this node");
  }
  verdicts_.with({"service_account_signed"}).inc();
  return "sa:" + claims->namespace_name + "/" + claims->service_account;
}

}  // namespace yurthub::cache
