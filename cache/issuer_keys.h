// IssuerKeys: the apiserver's service-account token keys as the node keeps them, so that offline
// a service-account token the node never saw accepted is still verified as the apiserver would
// (its signature, issuer, audience, expiry: kube/service_account_keys.h); Callers then serves it
// its service account's data (docs/security.md, "Offline: who gets what").
//   - The keys: the two issuer-discovery documents, cached like other discovery documents (the
//     response taps keep any 200 answer to them) and fetched by this unit's refresher through the
//     hub's own proxy port, with the node's identity, at start and every hour while online. Default
//     RBAC lets only service accounts read them: without the ClusterRoleBinding of
//     docs/operations.md the refresher logs how to grant it, once, and the node keeps matching
//     tokens by their hashes only (node_yurthub_service_account_keys_available 0).
//   - The audiences: those of the tokens the apiserver issued for itself (kubelet's TokenRequests
//     without audiences: Callers::issued), kept in the store; the issuer until one is seen.
// Thread-safe: verify() runs on worker threads; the refresher on the executor it is given.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "base/metrics.h"
#include "cache/cache_writer.h"
#include "cache/store.h"
#include "hub/hooks/cache_hooks.h"
#include "kube/service_account_keys.h"
#include "net/timer.h"

namespace yurthub::cache {

class IssuerKeys {
 public:
  static constexpr std::string_view kConfigurationPath = "/.well-known/openid-configuration";
  static constexpr std::string_view kKeysPath = "/openid/v1/jwks";
  static constexpr std::size_t kMaxAudiences = 16;

  IssuerKeys(Store& store, CacheWriter& writer, base::MetricsRegistry& registry);

  // The claims of `token` when the kept keys verify it at `now`; NotFound when no keys are kept.
  Result<kube::TokenClaims> verify(std::string_view token, std::int64_t now);
  // The apiserver issued `token` for itself: its audiences are the apiserver's.
  void learn_audiences(std::string_view token);

  // Fetches the documents now and then while context.online(); stop() ends it (thread-safe).
  void start(hub::ReplayContext context);
  void stop();

 private:
  std::shared_ptr<const kube::ServiceAccountKeys> keys();
  std::vector<std::string> audiences();
  boost::asio::awaitable<void> refresh_forever();
  boost::asio::awaitable<bool> fetch(std::string_view path);

  Store& store_;
  CacheWriter& writer_;
  base::Gauge& available_;
  std::mutex mutex_;  // guards the parsed keys and the documents they came from
  std::string configuration_, jwks_;
  std::shared_ptr<const kube::ServiceAccountKeys> parsed_;
  hub::ReplayContext context_;
  net::Timer* timer_ = nullptr;  // the refresher's own, while it runs (executor only)
  std::atomic<bool> running_{false}, stopping_{false};
  bool hinted_ = false;  // the RBAC hint was logged (refresher only)
};

}  // namespace yurthub::cache
