// The Autonomy condition's decision and patch; see autonomy_condition.h.
#include "cache/autonomy_condition.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/json_member.h"
#include "base/json_parse.h"

namespace yurthub::cache {
namespace {

// pkg/projectinfo and yurt-manager's controller/util/node (IsPodBoundenToNode).
constexpr const char* kAutonomyAnnotation = "node.beta.openyurt.io/autonomy";
constexpr const char* kAutonomyDurationAnnotation = "node.openyurt.io/autonomy-duration";
constexpr const char* kBindingAnnotation = "apps.openyurt.io/binding";
constexpr const char* kEdgeWorkerLabel = "openyurt.io/is-edge-worker";

std::string metadata_string(const rapidjson::Value& node, const char* map, const char* key) {
  const rapidjson::Value* metadata = base::find_member(node, "metadata");
  const rapidjson::Value* values = metadata ? base::find_member(*metadata, map) : nullptr;
  return values ? base::string_member(*values, key) : std::string();
}

bool autonomous(const rapidjson::Value& node) {
  return metadata_string(node, "annotations", kAutonomyAnnotation) == "true" ||
         !metadata_string(node, "annotations", kAutonomyDurationAnnotation).empty() ||
         metadata_string(node, "annotations", kBindingAnnotation) == "true";
}

std::optional<NodeCondition> current_condition(const rapidjson::Value& node) {
  const rapidjson::Value* status = base::find_member(node, "status");
  const rapidjson::Value* conditions = status ? base::find_member(*status, "conditions") : nullptr;
  if (!conditions || !conditions->IsArray()) return std::nullopt;
  for (const auto& c : conditions->GetArray()) {
    if (base::string_member(c, "type") != kAutonomyConditionType) continue;
    return NodeCondition{base::string_member(c, "status"), base::string_member(c, "reason"),
                         base::string_member(c, "message"),
                         base::string_member(c, "lastHeartbeatTime"),
                         base::string_member(c, "lastTransitionTime")};
  }
  return std::nullopt;
}

}  // namespace

AutonomyDecision decide_autonomy(std::string_view node_json, const CacheHealth& cache,
                                 int cache_failures, std::string_view now) {
  AutonomyDecision decision;
  decision.cache_failures = cache_failures;
  rapidjson::Document node;
  if (!base::parse_json(node_json, node) || !node.IsObject()) {
    decision.skipped = "the node is not a JSON object";
    return decision;
  }
  NodeCondition wanted;
  if (!autonomous(node) || metadata_string(node, "labels", kEdgeWorkerLabel) == "false") {
    wanted = {"False", "autonomy disabled",
              "The autonomy is disabled or this node is not edge node", "", ""};
  } else if (cache.state == CacheHealth::State::Healthy) {
    decision.cache_failures = 0;
    wanted = {"True", "autonomy enabled successfully", "The autonomy is enabled and it works fine",
              "", ""};
  } else {
    ++decision.cache_failures;
    // A cache that could not be opened will not heal by waiting; failing writes may (upstream
    // waits for more than kMaxCacheFailures checks, leaving the condition as it is meanwhile).
    if (cache.state == CacheHealth::State::Failing &&
        decision.cache_failures <= kMaxCacheFailures) {
      return decision;
    }
    wanted = {"Unknown", "cache failed", cache.message, "", ""};
  }
  const auto current = current_condition(node);
  if (current && current->status == wanted.status && current->reason == wanted.reason) {
    return decision;
  }
  wanted.last_heartbeat_time = std::string(now);
  // Only a change of status is a transition (upstream's 5a262188 set it on every write).
  wanted.last_transition_time = current && current->status == wanted.status
                                    ? current->last_transition_time
                                    : std::string(now);
  if (wanted.last_transition_time.empty()) wanted.last_transition_time = std::string(now);
  decision.write = std::move(wanted);
  return decision;
}

std::string autonomy_patch(const NodeCondition& condition) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  auto field = [&w](const char* name, std::string_view value) {
    w.Key(name);
    w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  };
  w.StartObject();
  w.Key("status");
  w.StartObject();
  w.Key("conditions");
  w.StartArray();
  w.StartObject();
  field("type", kAutonomyConditionType);
  field("status", condition.status);
  field("reason", condition.reason);
  field("message", condition.message);
  field("lastHeartbeatTime", condition.last_heartbeat_time);
  field("lastTransitionTime", condition.last_transition_time);
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace yurthub::cache
