// Tests for cache/update_rules.h, through apply_offline_write as an offline write meets them:
// the system metadata the apiserver keeps whatever a write says, a Pod's spec beyond images and
// tolerations and a Node's podCIDRs and providerID refused with the apiserver's 422, and what
// stays allowed (a new image, a status write, a Node's podCIDR set for the first time).
#include "cache/update_rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/json_parse.h"
#include "cache/offline_apply.h"
#include "test/base/json_test_support.h"

namespace yurthub::cache {
namespace {

using ::yurthub::test_support::parse_json;

using ::testing::HasSubstr;

constexpr const char* kPod =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default",)"
    R"("uid":"u-1","resourceVersion":"40","generation":1,)"
    R"("creationTimestamp":"2026-01-01T00:00:00Z"},)"
    R"("spec":{"nodeName":"edge-node-1","terminationGracePeriodSeconds":30,)"
    R"("containers":[{"name":"web","image":"nginx:1.25","securityContext":{"privileged":false}}]},)"
    R"("status":{"phase":"Running"}})";
constexpr const char* kNode =
    R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"edge-node-1","uid":"n-1",)"
    R"("resourceVersion":"7"},"spec":{"podCIDR":"10.244.1.0/24","podCIDRs":["10.244.1.0/24"],)"
    R"("providerID":"kind://edge-node-1"},"status":{}})";
constexpr const char* kStrategic = "application/strategic-merge-patch+json";
constexpr const char* kMerge = "application/merge-patch+json";

kube::RequestInfo write(const char* method, const char* target) {
  return kube::classify_request(method, target, "ops-tool/1.0");
}
const char* kPodPath = "/api/v1/namespaces/default/pods/web-0";

// The write's result, or "<code> <message>" when it is refused.
std::string apply(const char* base, std::uint64_t rv, const kube::RequestInfo& info,
                  const char* type, const std::string& body) {
  auto out = apply_offline_write(base, rv, info, type, body);
  if (auto* refused = std::get_if<WriteRefusal>(&out))
    return std::to_string(refused->error.code) + " " + refused->error.message;
  return std::get<std::string>(out);
}

TEST(UpdateRules, APodsImageMayChangeItsPrivilegesMayNot) {
  const auto image =
      parse_json(apply(kPod, 40, write("PATCH", kPodPath), kStrategic,
                       R"({"spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}})"));
  ASSERT_TRUE(image.IsObject());
  EXPECT_STREQ(image["spec"]["containers"][0]["image"].GetString(), "nginx:1.26");

  const std::string privileged =
      apply(kPod, 40, write("PATCH", kPodPath), kStrategic,
            R"({"spec":{"containers":[{"name":"web","securityContext":{"privileged":true}}]}})");
  EXPECT_THAT(privileged, HasSubstr("422 Pod \"web-0\" is invalid: spec: Forbidden: pod updates "
                                    "may not change fields other than"));
  EXPECT_THAT(apply(kPod, 40, write("PATCH", kPodPath), kMerge, R"({"spec":{"nodeName":"other"}})"),
              HasSubstr("422 Pod \"web-0\" is invalid: spec: Forbidden"));
  EXPECT_THAT(apply(kPod, 40, write("PATCH", kPodPath), kMerge,
                    R"({"spec":{"containers":[{"name":"web","image":"x"},{"name":"y"}]}})"),
              HasSubstr("422 Pod \"web-0\" is invalid"))
      << "a container added";
  // Tolerations and activeDeadlineSeconds may change.
  EXPECT_THAT(apply(kPod, 40, write("PATCH", kPodPath), kMerge,
                    R"({"spec":{"tolerations":[{"key":"k","operator":"Exists"}],)"
                    R"("activeDeadlineSeconds":60}})"),
              HasSubstr(R"("activeDeadlineSeconds":60)"));
}

TEST(UpdateRules, APodsSpecTurnedIntoAnythingButAnObjectIsRefusedNotAsserted) {
  // Found by offline_apply_fuzz: the rule copied and edited the new spec as an object.
  EXPECT_THAT(apply(kPod, 40, write("PATCH", kPodPath), kMerge, R"({"spec":"Pod"})"),
              HasSubstr("422 Pod \"web-0\" is invalid: spec: Forbidden"));
  EXPECT_THAT(apply(kPod, 40, write("PATCH", kPodPath), kMerge, R"({"spec":[1]})"),
              HasSubstr("422 Pod \"web-0\" is invalid: spec: Forbidden"));
}

TEST(UpdateRules, AStatusWriteNeverChangesTheSpec) {
  const auto out = parse_json(
      apply(kPod, 40, write("PATCH", "/api/v1/namespaces/default/pods/web-0/status"), kMerge,
            R"({"spec":{"containers":[{"name":"web","image":"attacker.example/x"}]},)"
            R"("status":{"phase":"Failed"}})"));
  ASSERT_TRUE(out.IsObject());
  EXPECT_STREQ(out["spec"]["containers"][0]["image"].GetString(), "nginx:1.25");
  EXPECT_STREQ(out["status"]["phase"].GetString(), "Failed");
}

TEST(UpdateRules, SystemMetadataIsKeptFromTheStoredObject) {
  const auto out =
      parse_json(apply(kPod, 40, write("PATCH", kPodPath), kMerge,
                       R"({"metadata":{"generation":9,"creationTimestamp":"2030-01-01T00:00:00Z",)"
                       R"("deletionTimestamp":"2030-01-01T00:00:00Z","labels":{"a":"b"}}})"));
  ASSERT_TRUE(out.IsObject());
  EXPECT_EQ(out["metadata"]["generation"].GetInt(), 1);
  EXPECT_STREQ(out["metadata"]["creationTimestamp"].GetString(), "2026-01-01T00:00:00Z");
  EXPECT_FALSE(out["metadata"].HasMember("deletionTimestamp"));
  EXPECT_STREQ(out["metadata"]["labels"]["a"].GetString(), "b");
  // An update without a uid gets the stored one; with another, it is a conflict.
  std::string body = kPod;
  body.replace(body.find(R"("uid":"u-1",)"), 12, "");
  EXPECT_THAT(apply(kPod, 40, write("PUT", kPodPath), "application/json", body),
              HasSubstr(R"("uid":"u-1")"));
  std::string other = kPod;
  other.replace(other.find("u-1"), 3, "u-2");
  EXPECT_THAT(apply(kPod, 40, write("PUT", kPodPath), "application/json", other),
              HasSubstr("409 Precondition failed: UID in precondition: u-2"));
}

TEST(UpdateRules, ANodesPodCIDRsAndProviderIDAreSetOnceNeverChanged) {
  const char* path = "/api/v1/nodes/edge-node-1";
  EXPECT_EQ(
      apply(kNode, 7, write("PATCH", path), kMerge, R"({"spec":{"podCIDRs":["10.244.9.0/24"]}})"),
      "422 Node \"edge-node-1\" is invalid: spec.podCIDRs: Forbidden: node updates may not "
      "change podCIDR except from \"\" to valid");
  EXPECT_THAT(apply(kNode, 7, write("PATCH", path), kMerge, R"({"spec":{"providerID":"x://y"}})"),
              HasSubstr("spec.providerID: Forbidden"));
  const char* fresh =
      R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"edge-node-1","uid":"n-1",)"
      R"("resourceVersion":"7"},"spec":{"providerID":"kind://edge-node-1"},"status":{}})";
  EXPECT_THAT(
      apply(fresh, 7, write("PATCH", path), kMerge, R"({"spec":{"podCIDRs":["10.244.9.0/24"]}})"),
      HasSubstr(R"("podCIDRs":["10.244.9.0/24"])"));
  EXPECT_THAT(apply(kNode, 7, write("PATCH", path), kMerge, R"({"metadata":{"labels":{"a":"b"}}})"),
              HasSubstr(R"("labels":{"a":"b"})"));
}

}  // namespace
}  // namespace yurthub::cache
