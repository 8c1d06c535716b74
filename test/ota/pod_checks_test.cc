// ota/pod_checks: the pre-checks of an OTA upgrade and image pre-pull, with upstream's messages
// (pkg/yurthub/otaupdate/ota_test.go's cases), and the pre-pull's status patch.
#include "ota/pod_checks.h"

#include <gtest/gtest.h>

#include "base/json_parse.h"
#include "test/base/json_test_support.h"

namespace yurthub::ota {
namespace {

using ::yurthub::test_support::parse_json;

// A pod of default/web on `node` with `conditions` (JSON array text) and `extra_metadata`.
rapidjson::Document pod(const std::string& conditions, const std::string& node = "n1",
                        const std::string& extra_metadata = "") {
  return parse_json(R"({"metadata":{"namespace":"default","name":"web")" + extra_metadata +
                    R"(},"spec":{"nodeName":")" + node + R"("},"status":{"conditions":)" +
                    conditions + "}}");
}

const std::string kNeedUpgrade =
    R"({"type":"PodNeedUpgrade","status":"True","message":"controllerrevision: v2"})";

TEST(PodStatusProblem, TableOfUpstreamChecks) {
  struct Case {
    std::string name;
    rapidjson::Document pod;
    std::optional<std::string> problem;
  };
  Case cases[] = {
      {"updatable", pod("[" + kNeedUpgrade + "]"), std::nullopt},
      {"deleting",
       pod("[" + kNeedUpgrade + "]", "n1", R"(,"deletionTimestamp":"2026-01-01T00:00:00Z")"),
       "Pod default/web is deleting, can not be updated"},
      {"null deletion timestamp is not deleting",
       pod("[" + kNeedUpgrade + "]", "n1", R"(,"deletionTimestamp":null)"), std::nullopt},
      {"other node", pod("[" + kNeedUpgrade + "]", "n2"),
       "Pod: default/web is running on n2, can not be updated"},
      {"no condition", pod("[]"), "Pod: default/web update status is False, can not be updated"},
      {"condition False", pod(R"([{"type":"PodNeedUpgrade","status":"False"}])"),
       "Pod: default/web update status is False, can not be updated"},
      {"no status at all",
       parse_json(R"({"metadata":{"namespace":"default","name":"web"},)"
                  R"("spec":{"nodeName":"n1"}})"),
       "Pod: default/web update status is False, can not be updated"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(pod_status_problem(c.pod, "n1"), c.problem) << c.name;
  }
}

TEST(ImageReadyProblem, AbsentTrueAndMatchingVersionPass) {
  EXPECT_EQ(image_ready_problem(pod("[" + kNeedUpgrade + "]")), std::nullopt);
  EXPECT_EQ(image_ready_problem(pod("[" + kNeedUpgrade +
                                    R"(,{"type":"PodImageReady","status":"True",)"
                                    R"("message":"controllerrevision: v2"}])")),
            std::nullopt);
}

TEST(ImageReadyProblem, NotTrueOrAnotherVersionIsRefusedWithReasonAndMessage) {
  EXPECT_EQ(
      image_ready_problem(pod("[" + kNeedUpgrade +
                              R"(,{"type":"PodImageReady","status":"False",)"
                              R"("reason":"WaitPullImage","message":"controllerrevision: v2"}])")),
      "Pod: default/web image is not ready, reason: WaitPullImage, message: "
      "controllerrevision: v2");
  EXPECT_EQ(image_ready_problem(
                pod("[" + kNeedUpgrade +
                    R"(,{"type":"PodImageReady","status":"True",)"
                    R"("reason":"PullImageSuccess","message":"controllerrevision: v1"}])")),
            "Pod: default/web image is not ready, reason: PullImageSuccess, message: "
            "controllerrevision: v1");
}

TEST(NextHashVersion, IsTheNeedUpgradeMessageWithoutThePrefix) {
  EXPECT_EQ(next_hash_version(pod("[" + kNeedUpgrade + "]")), "v2");
  EXPECT_EQ(next_hash_version(pod(R"([{"type":"PodNeedUpgrade","status":"True","message":"v3"}])")),
            "v3");
  EXPECT_EQ(next_hash_version(pod("[]")), "");
}

TEST(FirstOwnerKind, FirstReferenceOrNone) {
  EXPECT_EQ(first_owner_kind(
                pod("[]", "n1", R"(,"ownerReferences":[{"kind":"DaemonSet"},{"kind":"Node"}])")),
            "DaemonSet");
  EXPECT_EQ(first_owner_kind(pod("[]", "n1", R"(,"ownerReferences":[])")), std::nullopt);
  EXPECT_EQ(first_owner_kind(pod("[]")), std::nullopt);
}

TEST(StaticSetName, PodNameWithoutTheNodeSuffix) {
  EXPECT_EQ(static_set_name("yurthub-n1", "n1"), "yurthub");
  EXPECT_EQ(static_set_name("my-static-n1", "n1"), "my-static");
  EXPECT_EQ(static_set_name("yurthub-n2", "n1"), std::nullopt);
  EXPECT_EQ(static_set_name("yurthub", "n1"), std::nullopt);
  // strings.Split(name, "-n1")[0]: the part before the first occurrence
  EXPECT_EQ(static_set_name("a-n1-b-n1", "n1"), "a");
}

TEST(ImagePullPatch, AddsTheConditionBesideTheOthers) {
  const auto patch =
      parse_json(image_pull_patch(pod("[" + kNeedUpgrade + "]"), "2026-11-27T03:00:00Z"));
  const auto& conditions = patch["status"]["conditions"];
  ASSERT_EQ(conditions.Size(), 2u);
  EXPECT_EQ(base::to_json(conditions[0]), kNeedUpgrade);
  EXPECT_EQ(base::to_json(conditions[1]),
            R"({"type":"PodImageReady","status":"False","lastProbeTime":null,)"
            R"("lastTransitionTime":"2026-11-27T03:00:00Z","message":"controllerrevision: v2"})");
  EXPECT_EQ(patch.MemberCount(), 1u);
  EXPECT_EQ(patch["status"].MemberCount(), 1u);
}

TEST(ImagePullPatch, ReplacesTheConditionKeepingItsTransitionTimeWhenStillFalse) {
  const auto patch = parse_json(image_pull_patch(
      pod("[" + kNeedUpgrade +
          R"(,{"type":"PodImageReady","status":"False","reason":"PullImageFail",)"
          R"("lastTransitionTime":"2026-01-01T00:00:00Z","message":"controllerrevision: v1"}])"),
      "2026-11-27T03:00:00Z"));
  const auto& conditions = patch["status"]["conditions"];
  ASSERT_EQ(conditions.Size(), 2u);
  EXPECT_EQ(base::to_json(conditions[1]),
            R"({"type":"PodImageReady","status":"False","lastProbeTime":null,)"
            R"("lastTransitionTime":"2026-01-01T00:00:00Z","message":"controllerrevision: v2"})")
      << "the reason goes, the version is the next one";
}

// Found by test/fuzz/ota_pod_fuzz: a version holding an escaped NUL was cut short at it.
TEST(ImagePullPatch, AVersionWithAnEscapedNulIsKeptWhole) {
  const auto patch = parse_json(image_pull_patch(
      pod(R"([{"type":"PodNeedUpgrade","status":"True","message":"controllerrevision: a\u0000b"}])"),
      "2026-11-27T03:00:00Z"));
  const auto& message = patch["status"]["conditions"][1]["message"];
  EXPECT_EQ(std::string(message.GetString(), message.GetStringLength()),
            std::string("controllerrevision: a\0b", 23));
}

TEST(ImagePullPatch, ATrueConditionTurnsFalseNow) {
  const auto patch = parse_json(image_pull_patch(
      pod(R"([{"type":"PodImageReady","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"},)" +
          kNeedUpgrade + "]"),
      "2026-11-27T03:00:00Z"));
  const auto& conditions = patch["status"]["conditions"];
  ASSERT_EQ(conditions.Size(), 2u);
  EXPECT_STREQ(conditions[0]["type"].GetString(), "PodImageReady") << "in its place";
  EXPECT_STREQ(conditions[0]["status"].GetString(), "False");
  EXPECT_STREQ(conditions[0]["lastTransitionTime"].GetString(), "2026-11-27T03:00:00Z");
}

}  // namespace
}  // namespace yurthub::ota
