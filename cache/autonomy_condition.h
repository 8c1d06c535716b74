// The node's Autonomy condition, as upstream YurtHub keeps it (pkg/yurthub/proxy/autonomy): what
// it should say for a node object and the cache's health, as one pure decision, and the strategic
// merge patch that writes it. Called by AutonomyKeeper (cache/autonomy_keeper.h) on every check;
// table-tested in test/cache/autonomy_condition_test.cc. No I/O, no clock (the caller passes now).
//
//   False   "autonomy disabled": the node is not autonomous (none of the annotations below) or is
//           labelled openyurt.io/is-edge-worker=false.
//   True    "autonomy enabled successfully": autonomous and the cache is healthy.
//   Unknown "cache failed": autonomous and the cache could not be opened (at once), or it failed
//           on more than kMaxCacheFailures consecutive checks (as upstream); until then the
//           condition stays as it is.
// A node is autonomous, as yurt-manager's IsPodBoundenToNode reads it, when it is annotated
// node.beta.openyurt.io/autonomy=true, node.openyurt.io/autonomy-duration=<any non-empty value>
// or apps.openyurt.io/binding=true.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace yurthub::cache {

inline constexpr std::string_view kAutonomyConditionType = "Autonomy";
inline constexpr int kMaxCacheFailures = 3;

// The cache as the condition sees it (NodeCache::health(), or Unavailable without a cache).
struct CacheHealth {
  enum class State { Healthy, Failing, Unavailable };
  State state = State::Healthy;
  std::string message;  // why it is failing or unavailable, for the condition's message
};

struct NodeCondition {
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  std::string last_heartbeat_time;   // RFC 3339, seconds
  std::string last_transition_time;  // RFC 3339, seconds
  bool operator==(const NodeCondition&) const = default;
};

struct AutonomyDecision {
  int cache_failures = 0;              // consecutive failing checks, for the next decision
  std::optional<NodeCondition> write;  // the condition to patch; nullopt: leave the node as is
  std::string skipped;                 // when nothing is written and the node was unusable: why
};

// What the Autonomy condition of `node_json` (a Node as the apiserver returns it) should become.
// A condition is written only when its status or reason differs from the node's current one
// (the message alone does not: a changing error text would rewrite the node every check); its
// lastTransitionTime is `now` when the status changes and kept otherwise, its lastHeartbeatTime
// is `now`. `cache_failures` counts the consecutive failing checks before this one.
AutonomyDecision decide_autonomy(std::string_view node_json, const CacheHealth& cache,
                                 int cache_failures, std::string_view now);

// The strategic merge patch of nodes/<name>/status that sets `condition` (merge key `type`: the
// node's other conditions, kubelet's, are untouched).
std::string autonomy_patch(const NodeCondition& condition);

}  // namespace yurthub::cache
