// Tests for cache/autonomy_condition.h: the Autonomy condition each annotation and label gives,
// its transition time (kept while the status stays, now when it changes), its heartbeat, Unknown
// after more than three failing checks (at once for a cache that could not be opened), and the
// strategic merge patch that writes it.
#include "cache/autonomy_condition.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "base/json_parse.h"

namespace yurthub::cache {
namespace {

constexpr const char* kNow = "2026-11-27T03:00:00Z";
constexpr const char* kEarlier = "2026-11-20T10:00:00Z";
const CacheHealth kHealthy{};
const CacheHealth kFailing{CacheHealth::State::Failing, "2 cached objects could not be written"};
const CacheHealth kNoCache{CacheHealth::State::Unavailable, "cannot open the cache in /x"};

// A Node with these metadata members (e.g. R"("annotations":{...})") and, when not empty, this
// Autonomy condition's status, reason and times.
std::string node(const std::string& metadata, const std::string& status = "",
                 const std::string& reason = "") {
  std::string conditions = R"({"type":"Ready","status":"True","reason":"KubeletReady",)"
                           R"("lastHeartbeatTime":"2026-11-27T02:59:50Z",)"
                           R"("lastTransitionTime":"2026-11-01T00:00:00Z"})";
  if (!status.empty()) {
    conditions += R"(,{"type":"Autonomy","status":")" + status + R"(","reason":")" + reason +
                  R"(","message":"old","lastHeartbeatTime":"2026-11-20T10:00:00Z",)"
                  R"("lastTransitionTime":")" +
                  kEarlier + R"("})";
  }
  return R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"edge-node-1")" +
         (metadata.empty() ? "" : "," + metadata) + R"(},"status":{"conditions":[)" + conditions +
         "]}}";
}

const std::string kAutonomyOn = R"("annotations":{"node.beta.openyurt.io/autonomy":"true"})";

struct Case {
  const char* name;
  std::string metadata;
  const char* status;  // expected
};

TEST(AutonomyCondition, EachAnnotationAndLabel) {
  const std::vector<Case> cases = {
      {"no annotations", "", "False"},
      {"autonomy=true", kAutonomyOn, "True"},
      {"autonomy=false", R"("annotations":{"node.beta.openyurt.io/autonomy":"false"})", "False"},
      {"autonomy=TRUE is not true", R"("annotations":{"node.beta.openyurt.io/autonomy":"TRUE"})",
       "False"},
      {"autonomy-duration=0", R"("annotations":{"node.openyurt.io/autonomy-duration":"0"})",
       "True"},
      {"autonomy-duration=2h", R"("annotations":{"node.openyurt.io/autonomy-duration":"2h"})",
       "True"},
      {"autonomy-duration empty", R"("annotations":{"node.openyurt.io/autonomy-duration":""})",
       "False"},
      {"binding=true", R"("annotations":{"apps.openyurt.io/binding":"true"})", "True"},
      {"binding=false", R"("annotations":{"apps.openyurt.io/binding":"false"})", "False"},
      {"autonomy=true, is-edge-worker=false",
       kAutonomyOn + R"(,"labels":{"openyurt.io/is-edge-worker":"false"})", "False"},
      {"autonomy=true, is-edge-worker=true",
       kAutonomyOn + R"(,"labels":{"openyurt.io/is-edge-worker":"true"})", "True"},
      {"annotations not an object", R"("annotations":"autonomy")", "False"},
  };
  for (const auto& c : cases) {
    auto d = decide_autonomy(node(c.metadata), kHealthy, 0, kNow);
    ASSERT_TRUE(d.write) << c.name;
    EXPECT_EQ(d.write->status, c.status) << c.name;
    EXPECT_EQ(d.write->last_transition_time, kNow) << c.name;  // a new condition
    EXPECT_EQ(d.write->last_heartbeat_time, kNow) << c.name;
  }
}

TEST(AutonomyCondition, ReasonsAndMessagesAreUpstreams) {
  auto on = decide_autonomy(node(kAutonomyOn), kHealthy, 0, kNow);
  ASSERT_TRUE(on.write);
  EXPECT_EQ(on.write->reason, "autonomy enabled successfully");
  EXPECT_EQ(on.write->message, "The autonomy is enabled and it works fine");
  auto off = decide_autonomy(node(""), kHealthy, 0, kNow);
  ASSERT_TRUE(off.write);
  EXPECT_EQ(off.write->reason, "autonomy disabled");
  EXPECT_EQ(off.write->message, "The autonomy is disabled or this node is not edge node");
  auto unknown = decide_autonomy(node(kAutonomyOn), kNoCache, 0, kNow);
  ASSERT_TRUE(unknown.write);
  EXPECT_EQ(unknown.write->status, "Unknown");
  EXPECT_EQ(unknown.write->reason, "cache failed");
  EXPECT_EQ(unknown.write->message, "cannot open the cache in /x");
}

TEST(AutonomyCondition, UnchangedStatusIsNotWritten) {
  EXPECT_FALSE(
      decide_autonomy(node(kAutonomyOn, "True", "autonomy enabled successfully"), kHealthy, 0, kNow)
          .write);
  EXPECT_FALSE(decide_autonomy(node("", "False", "autonomy disabled"), kHealthy, 0, kNow).write);
  EXPECT_FALSE(
      decide_autonomy(node(kAutonomyOn, "Unknown", "cache failed"), kNoCache, 5, kNow).write);
}

TEST(AutonomyCondition, StatusChangeIsATransition) {
  auto d = decide_autonomy(node("", "True", "autonomy enabled successfully"), kHealthy, 0, kNow);
  ASSERT_TRUE(d.write);
  EXPECT_EQ(d.write->status, "False");
  EXPECT_EQ(d.write->last_transition_time, kNow);
  EXPECT_EQ(d.write->last_heartbeat_time, kNow);
}

TEST(AutonomyCondition, SameStatusOtherReasonKeepsTheTransitionTime) {
  // Written by someone else (another hub version) with another reason: rewritten, but it is not
  // a transition (upstream's 5a262188 moved lastTransitionTime on every write).
  auto d = decide_autonomy(node(kAutonomyOn, "True", "SomethingElse"), kHealthy, 0, kNow);
  ASSERT_TRUE(d.write);
  EXPECT_EQ(d.write->status, "True");
  EXPECT_EQ(d.write->reason, "autonomy enabled successfully");
  EXPECT_EQ(d.write->last_transition_time, kEarlier);
  EXPECT_EQ(d.write->last_heartbeat_time, kNow);
}

TEST(AutonomyCondition, UnknownOnlyAfterMoreThanThreeFailingChecks) {
  const std::string current = node(kAutonomyOn, "True", "autonomy enabled successfully");
  int failures = 0;
  for (int check = 1; check <= kMaxCacheFailures; ++check) {
    auto d = decide_autonomy(current, kFailing, failures, kNow);
    EXPECT_FALSE(d.write) << "check " << check;  // stays as it is meanwhile
    EXPECT_EQ(d.cache_failures, check);
    failures = d.cache_failures;
  }
  auto d = decide_autonomy(current, kFailing, failures, kNow);
  ASSERT_TRUE(d.write);
  EXPECT_EQ(d.write->status, "Unknown");
  EXPECT_EQ(d.write->reason, "cache failed");
  EXPECT_EQ(d.write->message, kFailing.message);
  EXPECT_EQ(d.write->last_transition_time, kNow);
  EXPECT_EQ(d.cache_failures, kMaxCacheFailures + 1);
}

TEST(AutonomyCondition, AHealthyCheckResetsTheFailures) {
  const std::string unknown = node(kAutonomyOn, "Unknown", "cache failed");
  auto d = decide_autonomy(unknown, kHealthy, 7, kNow);
  EXPECT_EQ(d.cache_failures, 0);
  ASSERT_TRUE(d.write);
  EXPECT_EQ(d.write->status, "True");
  EXPECT_EQ(d.write->last_transition_time, kNow);
  // Failing again starts counting from zero: no Unknown before the fourth check.
  EXPECT_FALSE(decide_autonomy(node(kAutonomyOn, "True", "autonomy enabled successfully"), kFailing,
                               d.cache_failures, kNow)
                   .write);
}

TEST(AutonomyCondition, AFailingCacheDoesNotMatterWhenAutonomyIsOff) {
  auto d = decide_autonomy(node(""), kNoCache, 2, kNow);
  ASSERT_TRUE(d.write);
  EXPECT_EQ(d.write->status, "False");
  EXPECT_EQ(d.cache_failures, 2);
}

TEST(AutonomyCondition, AnUnreadableNodeIsLeftAlone) {
  for (const char* body : {"", "not json", "[]", "{\"metadata\":"}) {
    auto d = decide_autonomy(body, kHealthy, 1, kNow);
    EXPECT_FALSE(d.write) << body;
    EXPECT_FALSE(d.skipped.empty()) << body;
    EXPECT_EQ(d.cache_failures, 1);
  }
}

TEST(AutonomyCondition, PatchSetsOnlyThatConditionByType) {
  NodeCondition c{"True", "autonomy enabled successfully", "it \"works\"", kNow, kEarlier};
  rapidjson::Document patch;
  ASSERT_TRUE(base::parse_json(autonomy_patch(c), patch));
  ASSERT_EQ(patch.MemberCount(), 1u);
  const auto& conditions = patch["status"]["conditions"];
  ASSERT_EQ(conditions.Size(), 1u);
  const auto& only = conditions[0];
  EXPECT_STREQ(only["type"].GetString(), "Autonomy");
  EXPECT_STREQ(only["status"].GetString(), "True");
  EXPECT_STREQ(only["reason"].GetString(), "autonomy enabled successfully");
  EXPECT_STREQ(only["message"].GetString(), "it \"works\"");
  EXPECT_STREQ(only["lastHeartbeatTime"].GetString(), kNow);
  EXPECT_STREQ(only["lastTransitionTime"].GetString(), kEarlier);
}

}  // namespace
}  // namespace yurthub::cache
