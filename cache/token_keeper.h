// TokenKeeper: the service-account tokens the apiserver issues to the node's cache agents
// (kubelet's TokenRequests for the projected token volume every pod has since Kubernetes 1.24),
// kept so that after a reboot without the cloud every pod can mount its volume again
// (docs/offline-semantics.md, "Service-account tokens"):
//   online   the apiserver's 201 answer to a cache agent's TokenRequest is kept under the
//            request's key: component, namespace, service account, audiences, expiration, and
//            the bound object (kind, name, uid);
//   offline  the same request is answered 201 with the kept answer while its token has not
//            expired; when none is kept (or it expired) with a clearly fake token that expires in
//            a minute, as YurtHub does, so the pod can start; counted by answer.
// Kept answers are secrets: a database of their own in the cache's 0600 file, never shown by
// `yurthub cache`, never given to another component, dropped once expired, at most kMaxKept.
// Thread-safe: taps and offline answers run on worker threads, stores in CacheWriter tasks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "base/clock.h"
#include "base/metrics.h"
#include "cache/cache_writer.h"
#include "cache/store.h"
#include "hub/hooks/cache_hooks.h"
#include "kube/request_info.h"

namespace yurthub::cache {

// What identifies one TokenRequest, from its body (JSON or protobuf).
struct TokenRequestKey {
  std::string component, namespace_name, service_account;
  std::vector<std::string> audiences;
  std::int64_t expiration_seconds = 0;  // 0: not given
  std::string bound_kind, bound_api_version, bound_name, bound_uid;
  // The database key: a SHA-256 of every field, so the key says nothing of the token.
  std::string digest() const;
};

// Reads the key of a TokenRequest to `info` (POST .../serviceaccounts/<name>/token); nullopt when
// the body is neither a JSON nor a protobuf TokenRequest.
std::optional<TokenRequestKey> read_token_request(const kube::RequestInfo& info,
                                                  std::string_view content_type,
                                                  std::string_view body);

class TokenKeeper {
 public:
  static constexpr std::size_t kMaxKept = 4096;

  TokenKeeper(Store& store, CacheWriter& writer, base::MetricsRegistry& registry,
              base::UnixSeconds now);

  // Keeps the apiserver's answer to the request with `key` if it is a 201 TokenRequest, and
  // hands the token it carries to `issued` (cache/callers.h remembers it).
  std::unique_ptr<hub::ResponseTap> tap(const TokenRequestKey& key,
                                        std::function<void(std::string_view token)> issued = {});

  // The answer to `key` while offline: the kept JSON when its token is still valid, else a fake
  // TokenRequest (a JWT no apiserver accepts, valid for 60 s). `kept` tells which.
  struct Answer {
    std::string json;
    bool kept = false;
  };
  Answer answer(const TokenRequestKey& key);

 private:
  void keep(const std::string& digest, const std::string& json, std::int64_t expires);
  std::string fake(const TokenRequestKey& key) const;

  Store& store_;
  CacheWriter& writer_;
  base::UnixSeconds now_;
  std::string fake_key_;  // HMAC key of fake tokens: random, never stored
  base::CounterFamily& answers_;
  base::CounterFamily& kept_;
};

// When a JWT (the apiserver's token) expires: its `exp` claim; nullopt when it has none.
std::optional<std::int64_t> jwt_expiry(std::string_view token);

// "2026-11-23T10:00:05Z" (RFC 3339, optional fraction) as seconds since the epoch.
std::optional<std::int64_t> parse_rfc3339(std::string_view text);

}  // namespace yurthub::cache
