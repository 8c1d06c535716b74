// The node's Autonomy condition with the real binaries (cache/autonomy_keeper.h): True on an
// autonomous edge node, False by each way autonomy turns off and True again by each way it turns
// on, Unknown when the cache cannot be opened, and nothing written while the hub is offline (the
// condition keeps its lastTransitionTime when nothing changed). The hub checks every 10 s, so
// every wait here allows a few checks.
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "test/integration/cluster.h"

namespace yurthub::test {
namespace {

using testing::HasSubstr;

constexpr auto kCheckWait = std::chrono::seconds(40);  // four checks of 10 s

struct Condition {
  std::string status, reason, message, heartbeat, transition;
};

class AutonomyCondition : public testing::Test {
 protected:
  // The node's Autonomy condition as the cloud has it (status "" when absent), and whether
  // kubelet's Ready condition is still there.
  Condition autonomy(bool* ready_kept = nullptr) {
    auto got = cluster_.kubectl_direct({"get", "node", "edge-node-1", "-o", "json"});
    Condition out;
    if (got.exit_code != 0) return out;
    rapidjson::Document node;
    node.Parse(got.out.c_str());
    if (node.HasParseError() || !node.IsObject() || !node.HasMember("status") ||
        !node["status"].HasMember("conditions")) {
      return out;
    }
    for (const auto& c : node["status"]["conditions"].GetArray()) {
      const std::string type = c["type"].GetString();
      if (type == "Ready" && ready_kept) *ready_kept = true;
      if (type != "Autonomy") continue;
      auto text = [&c](const char* name) {
        return c.HasMember(name) ? std::string(c[name].GetString()) : std::string();
      };
      out = {text("status"), text("reason"), text("message"), text("lastHeartbeatTime"),
             text("lastTransitionTime")};
    }
    return out;
  }
  bool wait_status(const std::string& status) {
    return eventually([&] { return autonomy().status == status; }, kCheckWait);
  }
  void kubectl(const std::vector<std::string>& args) {
    auto done = cluster_.kubectl_direct(args);
    ASSERT_EQ(done.exit_code, 0) << done.err;
  }
  void annotate(const std::string& change) {
    kubectl({"annotate", "--overwrite", "node", "edge-node-1", change});
  }
  void label(const std::string& change) {
    kubectl({"label", "--overwrite", "node", "edge-node-1", change});
  }
  double checks(const std::string& outcome) {
    return cluster_.metric("node_yurthub_autonomy_checks_total{outcome=\"" + outcome + "\"}");
  }
  void set_link(bool up) {  // the hub's health probe fails while the cloud goes on
    kubectl({"create", "--raw", std::string("/_fake/ready?ready=") + (up ? "true" : "false"), "-f",
             "-"});
  }

  Cluster cluster_{demo_cluster()};
};

TEST_F(AutonomyCondition, FollowsEachAnnotationAndTheEdgeWorkerLabel) {
  cluster_.start_apiserver();
  annotate("node.beta.openyurt.io/autonomy=true");
  cluster_.start_hub();
  ASSERT_TRUE(wait_status("True")) << cluster_.hub().log();
  bool ready_kept = false;
  const Condition on = autonomy(&ready_kept);
  EXPECT_EQ(on.reason, "autonomy enabled successfully");
  EXPECT_EQ(on.message, "The autonomy is enabled and it works fine");
  EXPECT_FALSE(on.transition.empty());
  EXPECT_TRUE(ready_kept) << "kubelet's conditions must be untouched";

  annotate("node.beta.openyurt.io/autonomy=false");
  ASSERT_TRUE(wait_status("False")) << cluster_.hub().log();
  const Condition off = autonomy();
  EXPECT_EQ(off.reason, "autonomy disabled");
  EXPECT_EQ(off.message, "The autonomy is disabled or this node is not edge node");

  annotate("node.openyurt.io/autonomy-duration=0");
  ASSERT_TRUE(wait_status("True")) << cluster_.hub().log();

  label("openyurt.io/is-edge-worker=false");
  ASSERT_TRUE(wait_status("False")) << cluster_.hub().log();
  label("openyurt.io/is-edge-worker=true");
  ASSERT_TRUE(wait_status("True")) << cluster_.hub().log();

  kubectl({"annotate", "node", "edge-node-1", "node.openyurt.io/autonomy-duration-"});
  ASSERT_TRUE(wait_status("False")) << cluster_.hub().log();
  annotate("apps.openyurt.io/binding=true");
  ASSERT_TRUE(wait_status("True")) << cluster_.hub().log();
  kubectl({"annotate", "node", "edge-node-1", "apps.openyurt.io/binding-"});
  ASSERT_TRUE(wait_status("False")) << cluster_.hub().log();
  EXPECT_EQ(checks("write_failed"), 0) << cluster_.hub().log();
}

TEST_F(AutonomyCondition, UnknownWhenTheCacheCannotBeOpened) {
  cluster_.start_apiserver();
  annotate("node.beta.openyurt.io/autonomy=true");
  // Under a regular file: no directory can be made there, so the hub runs without its cache.
  std::ofstream(cluster_.dir() + "/blocker") << "not a directory\n";
  cluster_.add_hub_flag("--disk-cache-path={dir}/blocker/cache");
  cluster_.start_hub();
  ASSERT_TRUE(wait_status("Unknown")) << cluster_.hub().log();
  const Condition unknown = autonomy();
  EXPECT_EQ(unknown.reason, "cache failed");
  EXPECT_THAT(unknown.message, HasSubstr("cannot open the cache in"));
  EXPECT_EQ(cluster_.metric("node_yurthub_cache_available"), 0);
  EXPECT_EQ(cluster_.metric("node_yurthub_error_keys_persistency_status"), 0);
  // Autonomy off: False whatever the cache.
  annotate("node.beta.openyurt.io/autonomy=false");
  ASSERT_TRUE(wait_status("False")) << cluster_.hub().log();
}

TEST_F(AutonomyCondition, NothingIsWrittenWhileOffline) {
  cluster_.start_apiserver();
  annotate("node.beta.openyurt.io/autonomy=true");
  cluster_.start_hub();
  ASSERT_TRUE(wait_status("True")) << cluster_.hub().log();
  EXPECT_EQ(cluster_.metric("node_yurthub_error_keys_count"), 0);
  EXPECT_EQ(cluster_.metric("node_yurthub_error_keys_persistency_status"), 1);
  const Condition online = autonomy();

  // Offline, autonomy turned off in the cloud: the hub neither reads nor writes the node.
  set_link(false);
  ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(false)) << cluster_.hub().log();
  const double written = checks("written");
  annotate("node.beta.openyurt.io/autonomy=false");
  const double offline_before = checks("offline");
  ASSERT_TRUE(eventually([&] { return checks("offline") >= offline_before + 2; }, kCheckWait))
      << cluster_.hub().log();
  EXPECT_EQ(checks("written"), written);
  EXPECT_EQ(autonomy().status, "True");

  // Back online with nothing changed after all: no write, the transition time stays.
  annotate("node.beta.openyurt.io/autonomy=true");
  set_link(true);
  ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(true)) << cluster_.hub().log();
  const double unchanged_before = checks("unchanged");
  ASSERT_TRUE(eventually([&] { return checks("unchanged") >= unchanged_before + 1; }, kCheckWait))
      << cluster_.hub().log();
  EXPECT_EQ(checks("written"), written);
  const Condition back = autonomy();
  EXPECT_EQ(back.status, "True");
  EXPECT_EQ(back.transition, online.transition);
  EXPECT_EQ(back.heartbeat, online.heartbeat);

  // The apiserver itself gone: still nothing attempted.
  cluster_.stop_apiserver(SIGKILL);
  ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(false)) << cluster_.hub().log();
  const double gone_before = checks("offline");
  ASSERT_TRUE(eventually([&] { return checks("offline") >= gone_before + 1; }, kCheckWait));
  EXPECT_EQ(checks("written"), written);
  EXPECT_EQ(checks("write_failed"), 0);
}

}  // namespace
}  // namespace yurthub::test
