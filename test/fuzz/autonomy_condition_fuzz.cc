// Fuzz target for cache/autonomy_condition.h decide_autonomy: the Node the apiserver returned
// (any JSON, or none) and the cache's health, to the Autonomy condition the hub would patch, and
// autonomy_patch of it. Input: one byte choosing the cache's state and the failures counted so
// far, then the Node's JSON. Oracles: a condition written has a known status, the heartbeat
// `now`, and a transition time that is `now` or came from the node; its patch is JSON setting
// exactly that condition.
#include <rapidjson/document.h>

#include "base/json_parse.h"
#include "cache/autonomy_condition.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

namespace {

// Whether `time` is the lastTransitionTime of one of `node`'s Autonomy conditions.
bool node_has_transition_time(std::string_view node, const std::string& time) {
  rapidjson::Document doc;
  if (!base::parse_json(node, doc) || !doc.IsObject() || !doc.HasMember("status") ||
      !doc["status"].IsObject() || !doc["status"].HasMember("conditions") ||
      !doc["status"]["conditions"].IsArray()) {
    return false;
  }
  for (const auto& c : doc["status"]["conditions"].GetArray()) {
    if (c.IsObject() && c.HasMember("lastTransitionTime") && c["lastTransitionTime"].IsString() &&
        time == std::string_view(c["lastTransitionTime"].GetString(),
                                 c["lastTransitionTime"].GetStringLength())) {
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 64 * 1024) return 0;
  constexpr std::string_view kNow = "2026-11-27T03:04:05Z";
  cache::CacheHealth health;
  health.state = static_cast<cache::CacheHealth::State>(data[0] % 3);
  health.message = "the cache \"failed\"";
  const int failures = (data[0] >> 2) % 6;
  const std::string_view node = fuzz::as_text(data + 1, size - 1);
  const auto decision = cache::decide_autonomy(node, health, failures, kNow);
  fuzz::check(decision.cache_failures >= 0, "a negative failure count");
  if (!decision.write) return 0;
  const auto& c = *decision.write;
  fuzz::check(c.status == "True" || c.status == "False" || c.status == "Unknown",
              "a condition status Kubernetes does not have");
  fuzz::check(c.last_heartbeat_time == kNow, "a heartbeat that is not now");
  fuzz::check(
      c.last_transition_time == kNow || node_has_transition_time(node, c.last_transition_time),
      "a transition time from nowhere");
  rapidjson::Document patch;
  fuzz::check(static_cast<bool>(base::parse_json(cache::autonomy_patch(c), patch)),
              "a patch that is no JSON");
  fuzz::check(patch.IsObject() && patch.HasMember("status") && patch["status"].IsObject() &&
                  patch["status"].HasMember("conditions") &&
                  patch["status"]["conditions"].IsArray() &&
                  patch["status"]["conditions"].Size() == 1,
              "a patch that does not set one condition");
  const auto& set = patch["status"]["conditions"][0];
  fuzz::check(
      set.IsObject() && set.HasMember("status") && set["status"].IsString() &&
          c.status == std::string_view(set["status"].GetString(), set["status"].GetStringLength()),
      "a patch setting another status");
  return 0;
}
