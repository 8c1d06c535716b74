// AccessReviews: whether a caller with a bearer token may read a pool-scope resource, asked of
// the apiserver itself (a SelfSubjectAccessReview made with the caller's own token, sent through
// the hub's proxy port like any request of the node, so it reaches the cloud with that token and
// never the node's identity) and remembered per token, verb, resource and namespace for a while.
// So the shared watch cache hands a pod only what RBAC lets it list or watch: a token the
// apiserver cannot be asked about (offline, say) is not cleared, and its request goes the usual
// way (forwarded, or the offline cache with its own identity rules).
// Used by SharedCache::admit on worker threads; thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "base/metrics.h"
#include "kube/request_info.h"

namespace yurthub::pool {

struct AccessReviewOptions {
  std::string proxy_host = "127.0.0.1";
  unsigned short proxy_port = 10261;
  std::string user_agent;  // the shared cache's own (never answered from it)
  std::chrono::seconds allowed_for{300};
  std::chrono::seconds denied_for{30};
  std::chrono::milliseconds timeout{5000};
  std::size_t max_entries = 4096;
};

// The SelfSubjectAccessReview body for `verb` on the request's resource and namespace.
std::string access_review_body(const kube::RequestInfo& info);
// status.allowed of a SelfSubjectAccessReview answer; false for anything else.
bool review_allows(std::string_view body);

class AccessReviews {
 public:
  explicit AccessReviews(base::MetricsRegistry& metrics);
  void set_options(AccessReviewOptions options);  // before the first allowed()

  // REQUIRES: info.bearer_token is set.
  boost::asio::awaitable<bool> allowed(const kube::RequestInfo& info);

 private:
  struct Verdict {
    bool allowed = false;
    std::chrono::steady_clock::time_point until;
  };
  std::string key_of(const kube::RequestInfo& info) const;

  AccessReviewOptions options_;
  std::mutex mutex_;  // guards verdicts_
  std::map<std::string, Verdict> verdicts_;
  base::CounterFamily& reviews_;  // node_yurthub_pool_access_reviews_total{result}
};

}  // namespace yurthub::pool
