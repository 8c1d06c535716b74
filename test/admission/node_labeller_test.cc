// admission/node_labeller's decisions: the label a node's pool asks for, and the NodePool version
// discovery chooses. The labeller's watching and patching run against the fake apiserver in
// test/integration/pool_admission_test.cc.
#include "admission/node_labeller.h"

#include <gtest/gtest.h>

#include "base/json_parse.h"

namespace yurthub::admission {
namespace {

std::shared_ptr<const rapidjson::Document> parse(const std::string& json) {
  auto doc = std::make_shared<rapidjson::Document>();
  EXPECT_TRUE(base::parse_json(json, *doc).ok()) << json;
  return doc;
}

TEST(DesiredHostNetworkLabel, FollowsTheNodesPool) {
  net::ObjectMap pools = {
      {"host", parse(R"({"metadata":{"name":"host"},"spec":{"type":"Edge","hostNetwork":true}})")},
      {"plain", parse(R"({"metadata":{"name":"plain"},"spec":{"type":"Edge"}})")},
      {"off", parse(R"({"metadata":{"name":"off"},"spec":{"hostNetwork":false}})")},
      {"odd", parse(R"({"metadata":{"name":"odd"},"spec":{"hostNetwork":"true"}})")},
  };
  struct Case {
    std::string node;
    std::optional<std::string> desired;
  };
  const Case cases[] = {
      {R"({"metadata":{"labels":{"apps.openyurt.io/nodepool":"host"}}})", "true"},
      {R"({"metadata":{"labels":{"apps.openyurt.io/nodepool":"plain"}}})", "false"},
      {R"({"metadata":{"labels":{"apps.openyurt.io/nodepool":"off"}}})", "false"},
      // Only a boolean true is true, as Go's decoder would refuse anything else.
      {R"({"metadata":{"labels":{"apps.openyurt.io/nodepool":"odd"}}})", "false"},
      // A pool not (yet) seen, no pool, no labels: left as it is.
      {R"({"metadata":{"labels":{"apps.openyurt.io/nodepool":"later"}}})", std::nullopt},
      {R"({"metadata":{"labels":{"apps.openyurt.io/nodepool":""}}})", std::nullopt},
      {R"({"metadata":{}})", std::nullopt},
      {R"([])", std::nullopt},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(desired_host_network_label(*parse(c.node), pools), c.desired) << c.node;
  }
}

TEST(ChooseNodePoolVersion, PrefersV1beta2) {
  EXPECT_EQ(
      *choose_node_pool_version(
          R"({"kind":"APIGroup","name":"apps.openyurt.io","versions":[)"
          R"({"groupVersion":"apps.openyurt.io/v1beta1","version":"v1beta1"},)"
          R"({"groupVersion":"apps.openyurt.io/v1beta2","version":"v1beta2"}],)"
          R"("preferredVersion":{"groupVersion":"apps.openyurt.io/v1beta1","version":"v1beta1"}})"),
      "v1beta2");
  EXPECT_EQ(
      *choose_node_pool_version(R"({"versions":[{"version":"v1alpha1"},{"version":"v1beta1"}]})"),
      "v1beta1");
  EXPECT_FALSE(choose_node_pool_version(R"({"versions":[{"version":"v1alpha1"}]})"));
  EXPECT_FALSE(choose_node_pool_version(R"({"versions":null})"));
  EXPECT_FALSE(choose_node_pool_version("not json"));
}

}  // namespace
}  // namespace yurthub::admission
