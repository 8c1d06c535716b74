// Which leaders a follower follows (pool/leader_hubs.h) and how the leader-hub ConfigMap names
// them (pool/leader_hub_config.h), as yurt-manager writes it.
#include "pool/leader_hubs.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "pool/leader_hub_config.h"

namespace yurthub::pool {
namespace {

LeaderHubConfig parse(const char* json) {
  rapidjson::Document doc;
  doc.Parse(json);
  return parse_leader_hub_config(doc);
}

TEST(LeaderHubConfig, ReadsLeadersElectionAndInterconnectivity) {
  auto c = parse(R"({"data":{"leaders":"edge-1/10.0.0.1,bad,edge-2/10.0.0.2",)"
                 R"("enable-leader-election":"true","interconnectivity":"true"}})");
  ASSERT_EQ(c.leaders.size(), 2u);  // "bad" has no address
  EXPECT_EQ(c.leaders[0], (LeaderHub{"edge-1", "10.0.0.1"}));
  EXPECT_EQ(c.leaders[1], (LeaderHub{"edge-2", "10.0.0.2"}));
  EXPECT_TRUE(c.leader_election);
  EXPECT_TRUE(c.interconnectivity);
  EXPECT_FALSE(c.resources.has_value());
  auto off = parse(R"({"data":{"leaders":"edge-1/10.0.0.1","enable-leader-election":"false"}})");
  EXPECT_FALSE(off.leader_election);
  EXPECT_FALSE(parse(R"({"data":{}})").leader_election);
}

TEST(LeaderHubs, AFollowerFollowsOnlyWhenElectionIsOnAndItIsNoLeader) {
  const std::vector<LeaderHub> leaders = {{"edge-1", "10.0.0.1"}, {"edge-2", "10.0.0.2"}};
  EXPECT_EQ(leaders_to_follow(leaders, true, "edge-3"), leaders);
  // A leader feeds from the cloud itself (YurtHub's rule), as every hub does without election.
  EXPECT_TRUE(leaders_to_follow(leaders, true, "edge-2").empty());
  EXPECT_TRUE(leaders_to_follow(leaders, false, "edge-3").empty());
  EXPECT_TRUE(leaders_to_follow({}, true, "edge-3").empty());
}

}  // namespace
}  // namespace yurthub::pool
