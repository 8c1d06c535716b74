// Tests for cache/offline_apply.h: what an offline write refuses before it can hurt the hub. A
// body nested past the parse bound is a 400 (1 MiB of '[' once overflowed the cache writer's
// stack), a JSON patch of more than 10000 operations a 413 and one whose copies grow the object
// by more than 3 MiB a 422, as kube-apiserver answers them; a result over 3 MiB is a 413; a
// number beyond a double's range is a 400.
#include "cache/offline_apply.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace yurthub::cache {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kPod =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default",)"
    R"("uid":"u-1","resourceVersion":"40","labels":{"app":"web"}},"spec":{"nodeName":"n"},)"
    R"("status":{"phase":"Pending"}})";
constexpr const char* kJsonPatch = "application/json-patch+json";
constexpr const char* kMergePatch = "application/merge-patch+json";

kube::RequestInfo pod_write(const char* method) {
  return kube::classify_request(method, "/api/v1/namespaces/default/pods/web-0", "kubelet/v1.32.4");
}

WriteRefusal refused(std::variant<std::string, WriteRefusal> result) {
  EXPECT_TRUE(std::holds_alternative<WriteRefusal>(result)) << std::get<std::string>(result).size();
  if (!std::holds_alternative<WriteRefusal>(result)) return {kube::Failure::Invalid, "", ""};
  return std::get<WriteRefusal>(std::move(result));
}

TEST(OfflineApply, ABodyNestedPastTheBoundIsABadRequestNotAStackOverflow) {
  const std::string brackets(1u << 20, '[');
  for (const char* type : {kJsonPatch, kMergePatch, "application/strategic-merge-patch+json"}) {
    SCOPED_TRACE(type);
    const WriteRefusal r =
        refused(apply_offline_write(kPod, 40, pod_write("PATCH"), type, brackets));
    EXPECT_EQ(r.error.code, 400u);
    EXPECT_EQ(r.error.message,
              "the request body is not valid JSON: JSON nested more than 1000 levels deep");
    EXPECT_STREQ(r.reason, "bad_body");
  }
  const WriteRefusal r = refused(apply_offline_write(kPod, 40, pod_write("PUT"), "application/json",
                                                     R"({"spec":)" + brackets));
  EXPECT_EQ(r.error.code, 400u);
}

// RapidJSON reads 2e308 as infinity and then cannot write it: the stored object would have been
// cut short at that number (found by test/fuzz/json_patch_fuzz.cc).
TEST(OfflineApply, ANumberBeyondADoubleIsABadRequestNotATruncatedObject) {
  const WriteRefusal r = refused(apply_offline_write(kPod, 40, pod_write("PATCH"), kMergePatch,
                                                     R"({"spec":{"priority":2e308}})"));
  EXPECT_EQ(r.error.code, 400u);
  EXPECT_EQ(r.error.message,
            "the request body is not valid JSON: invalid JSON at byte 20: a number too "
            "large for a double");
}

// A /status write's result is the cached object with the new status: one without metadata once
// reached metadata["resourceVersion"] on a missing member (an assertion, or undefined behaviour).
TEST(OfflineApply, ACachedObjectWithoutMetadataCannotBeWritten) {
  const kube::RequestInfo status_write = kube::classify_request(
      "PATCH", "/api/v1/namespaces/default/pods/web-0/status", "kubelet/v1.32.4");
  for (const char* base : {R"({"kind":"Pod"})", R"({"kind":"Pod","metadata":[]})"}) {
    const WriteRefusal r = refused(apply_offline_write(
        base, 40, status_write, kMergePatch, R"({"metadata":{"name":"web-0"},"status":{}})"));
    EXPECT_EQ(r.error.code, 503u);
    EXPECT_STREQ(r.reason, "not_cached");
  }
}

std::string json_patch(int operations, const std::string& op) {
  std::string out = "[";
  for (int i = 0; i < operations; ++i) out += (i ? "," : "") + op;
  return out + "]";
}

TEST(OfflineApply, AJsonPatchOfMoreThanTenThousandOperationsIsA413) {
  const std::string test_op = R"({"op":"test","path":"/status/phase","value":"Pending"})";
  const auto ok =
      apply_offline_write(kPod, 40, pod_write("PATCH"), kJsonPatch, json_patch(10000, test_op));
  EXPECT_TRUE(std::holds_alternative<std::string>(ok));
  const WriteRefusal r = refused(
      apply_offline_write(kPod, 40, pod_write("PATCH"), kJsonPatch, json_patch(10001, test_op)));
  EXPECT_EQ(r.error.code, 413u);
  EXPECT_EQ(r.error.message,
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, "
            "got 10001");
  EXPECT_STREQ(r.reason, "too_large");
}

TEST(OfflineApply, CopiesThatDoubleTheObjectAreRefusedAtThreeMebibytes) {
  std::string ops = "[";
  for (int i = 0; i < 64;
       ++i) {  // each copy doubles metadata.labels: 2^64 times its size at the end
    ops += std::string(i ? "," : "") +
           R"({"op":"copy","from":"/metadata/labels","path":"/metadata/labels/l)" +
           std::to_string(i) + R"("})";
  }
  const WriteRefusal r =
      refused(apply_offline_write(kPod, 40, pod_write("PATCH"), kJsonPatch, ops + "]"));
  EXPECT_EQ(r.error.code, 422u);
  EXPECT_THAT(r.error.message, StartsWith("json patch operation "));
  EXPECT_THAT(r.error.message,
              HasSubstr("Unable to complete the copy, the accumulated size increase of "
                        "copy is "));
  EXPECT_THAT(r.error.message, HasSubstr(", exceeding the limit 3145728"));
}

TEST(OfflineApply, AResultOverThreeMebibytesIsA413) {
  auto patch = [](std::size_t bytes) {
    return R"({"metadata":{"annotations":{"big":")" + std::string(bytes, 'x') + R"("}}})";
  };
  const auto ok = apply_offline_write(kPod, 40, pod_write("PATCH"), kMergePatch, patch(3u << 19));
  ASSERT_TRUE(std::holds_alternative<std::string>(ok));
  const std::string base = std::get<std::string>(ok);  // 1.5 MiB
  const WriteRefusal r = refused(apply_offline_write(
      base, 40, pod_write("PATCH"), kMergePatch,
      R"({"metadata":{"annotations":{"more":")" + std::string(2u << 20, 'y') + R"("}}})"));
  EXPECT_EQ(r.error.code, 413u);
  EXPECT_THAT(r.error.message, HasSubstr("the patch makes pods \"web-0\" "));
  EXPECT_THAT(r.error.message, HasSubstr(" bytes long, over the limit of 3145728"));
  EXPECT_STREQ(r.reason, "too_large");
}

}  // namespace
}  // namespace yurthub::cache
