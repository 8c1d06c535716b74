// Re-basing an offline update the cloud refused with 409 (cache/replay_rebase.h): disjoint
// changes are combined on the cloud's version, the same field changed on both sides is a
// conflict (never forced), and only what the target writes counts.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "cache/replay_rebase.h"
#include "test/base/json_test_support.h"

namespace yurthub::cache {
namespace {

using ::yurthub::test_support::parse_json;

const char* kBase =
    R"({"metadata":{"name":"web-0","resourceVersion":"40","labels":{"app":"web"}},"spec":{"x":1},"status":{"phase":"Pending"}})";

TEST(ReplayRebase, DisjointChangesAreCombinedOnTheCloudsVersion) {
  auto r = rebase_update(
      kBase,
      R"({"metadata":{"name":"web-0","resourceVersion":"40","labels":{"app":"web","edge":"1"}},"spec":{"x":1},"status":{"phase":"Pending"}})",
      R"({"metadata":{"name":"web-0","resourceVersion":"57","labels":{"app":"web","cloud":"1"}},"spec":{"x":1},"status":{"phase":"Running"}})",
      false);
  ASSERT_EQ(r.kind, Rebase::Kind::Put) << r.detail;
  auto put = parse_json(r.body);
  EXPECT_STREQ(put["metadata"]["resourceVersion"].GetString(),
               "57");  // the cloud's: still optimistic
  EXPECT_STREQ(put["metadata"]["labels"]["edge"].GetString(), "1");
  EXPECT_STREQ(put["metadata"]["labels"]["cloud"].GetString(), "1");
  EXPECT_STREQ(put["status"]["phase"].GetString(), "Running");  // not the update's to change
}

TEST(ReplayRebase, TheSameFieldChangedOnBothSidesIsAConflict) {
  auto r = rebase_update(
      kBase, R"({"metadata":{"name":"web-0","labels":{"app":"edge"}},"spec":{"x":1}})",
      R"({"metadata":{"name":"web-0","resourceVersion":"57","labels":{"app":"cloud"}},"spec":{"x":1}})",
      false);
  EXPECT_EQ(r.kind, Rebase::Kind::Conflict);
  EXPECT_NE(r.detail.find("metadata.labels.app"), std::string::npos) << r.detail;
  // A parent replaced on one side, a child on the other.
  auto nested =
      rebase_update(kBase, R"({"metadata":{"name":"web-0","labels":{"app":"web"}},"spec":{"x":2}})",
                    R"({"metadata":{"name":"web-0","labels":{"app":"web"}},"spec":null})", false);
  EXPECT_EQ(nested.kind, Rebase::Kind::Conflict);
}

TEST(ReplayRebase, TheSameChangeOnBothSidesIsNothingToSend) {
  auto r = rebase_update(
      kBase,
      R"({"metadata":{"name":"web-0","labels":{"app":"db"}},"spec":{"x":1},"status":{"phase":"Pending"}})",
      R"({"metadata":{"name":"web-0","resourceVersion":"57","labels":{"app":"db"}},"spec":{"x":1},"status":{"phase":"Pending"}})",
      false);
  EXPECT_EQ(r.kind, Rebase::Kind::Nothing) << r.detail;
}

TEST(ReplayRebase, AStatusUpdateCountsOnlyStatus) {
  // The cloud changed a label; the update changed the phase: a /status update never clashes
  // with metadata.
  auto r = rebase_update(
      kBase,
      R"({"metadata":{"name":"web-0","labels":{"app":"other"}},"spec":{"x":1},"status":{"phase":"Running"}})",
      R"({"metadata":{"name":"web-0","resourceVersion":"57","labels":{"app":"cloud"}},"spec":{"x":1},"status":{"phase":"Pending"}})",
      true);
  ASSERT_EQ(r.kind, Rebase::Kind::Put) << r.detail;
  auto put = parse_json(r.body);
  EXPECT_STREQ(put["status"]["phase"].GetString(), "Running");
  EXPECT_STREQ(put["metadata"]["labels"]["app"].GetString(), "cloud");
  EXPECT_EQ(rebase_update(kBase, "not json", kBase, false).kind, Rebase::Kind::Unreadable);
}

}  // namespace
}  // namespace yurthub::cache
