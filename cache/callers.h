// Callers: whose credential a request carries, and so whose cached data it may read or change
// (docs/security.md, "Offline: who gets what"). Every cached set belongs to the identity that
// obtained it online, its owner:
//   ""                     the node: the hub lent its own identity to a caller without a token;
//   "sa:<namespace>/<sa>"  a service account, for a service-account JWT (every token of one
//                          service account has its permissions, so a token kubelet rotated
//                          hourly still reads what an earlier one obtained);
//   "token:<hash>"         any other bearer token, by a keyed hash (HMAC-SHA256 under a random key
//                          kept in the cache; the token itself is never stored).
// Online, owner_of() names the owner a kept response goes to, and a token the apiserver accepted
// (a 2xx answer to a request that carried it) or issued to kubelet for a pod (a TokenRequest for
// the apiserver's own audience) is remembered by its hash, with its expiry and bound pod.
// Offline, verify() says whose data a caller may have: the node's for a caller without a token;
// for a token, its owner's only if it was remembered and has neither expired nor lost its pod.
// A service-account token never seen here is verified by the apiserver's keys, when the node
// keeps them (issuer_keys.h): signature, issuer, audience, expiry and the bound pod, so a token
// kubelet rotated while offline still reads its service account's data. Any other token gets a
// Status (the node cannot verify it offline), never another owner's data.
// The User-Agent only picks which of the owner's sets: it is a label, never a credential.
// Thread-safe: called from every worker thread; remembered tokens are written in CacheWriter
// tasks.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>

#include "base/clock.h"
#include "base/metrics.h"
#include "cache/cache_writer.h"
#include "cache/issuer_keys.h"
#include "cache/store.h"
#include "kube/request_info.h"
#include "kube/status.h"

namespace yurthub::cache {

class Callers {
 public:
  // At most this many remembered tokens; past it the expired, then the soonest to expire, go.
  static constexpr std::size_t kMaxRemembered = 4096;

  // The key of the tokens' hashes, created (random) on the first read-write open and kept in the
  // cache, so the hashes of a restarted hub match. Called before the CacheWriter starts.
  static Result<std::string> load_key(Store& store);

  // With `issuer_keys`, offline a service-account token never seen here is verified by its
  // signature (cache/issuer_keys.h) and gets its service account's data.
  Callers(Store& store, CacheWriter& writer, base::MetricsRegistry& registry, std::string key,
          base::UnixSeconds now, IssuerKeys* issuer_keys = nullptr);

  // The owner of what the answer to `info` is kept under (online).
  std::string owner_of(const kube::RequestInfo& info) const;
  // The apiserver answered `info` with a 2xx: its bearer token (if any) is remembered.
  void accepted(const kube::RequestInfo& info);
  // The apiserver issued `token` to the node (kubelet's TokenRequest for a pod, for the
  // apiserver's own audience): remembered as its service account's.
  void issued(std::string_view token);

  // Offline: the owner whose data `info`'s caller may read and change, or the Status it gets. A
  // token bound to a pod is refused once the node's cache no longer has that pod (its uid).
  std::variant<std::string, kube::ApiError> verify(const kube::RequestInfo& info);

 private:
  struct Remembered {
    std::string owner;
    std::int64_t expires = 0;  // 0: never (a token without `exp`)
    std::string pod_namespace, pod_name, pod_uid;
  };
  std::string digest(std::string_view token) const;
  std::string owner_of_token(std::string_view token, const std::string& digest) const;
  void remember(std::string_view token);
  std::optional<Remembered> lookup(const std::string& digest);
  // Offline: a token never remembered, checked against the apiserver's keys.
  std::variant<std::string, kube::ApiError> verify_signature(std::string_view token);

  Store& store_;
  CacheWriter& writer_;
  std::string key_;
  base::UnixSeconds now_;
  IssuerKeys* issuer_keys_;
  base::CounterFamily& verdicts_;
  std::mutex mutex_;  // guards seen_
  // Digests remembered (or being written) in this run, so a token is written once, not at every
  // request; cleared when it grows past twice the bound.
  std::unordered_map<std::string, Remembered> seen_;
};

}  // namespace yurthub::cache
