// The OTA endpoints of the admin port with the real binary (issue 31): GET /pods lists the pods
// kubelet's traffic left in the cache, POST .../upgrade deletes a DaemonSet pod that needs its
// upgrade at the apiserver, POST .../imagepull sets its PodImageReady condition, a pod without
// PodNeedUpgrade is refused, a non-root caller is refused on all three, and offline the POSTs
// answer 503 while GET /pods still answers from the cache (as upstream's server.go routes them).
// Needs root, to act as another user.
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/integration/cluster.h"
#include "test/integration/http_client.h"

namespace yurthub::test {
namespace {

using testing::HasSubstr;

constexpr uid_t kNobody = 65534;
const std::string kPodPath = "/openyurt.io/v1/namespaces/default/pods/";

class Ota : public testing::Test {
 protected:
  static ClusterOptions options() {
    ClusterOptions o = demo_cluster();
    o.seeds.push_back("fake_apiserver/ota-objects.json");
    return o;
  }
  void SetUp() override {
    if (::getuid() != 0) GTEST_SKIP() << "needs root to act as another user";
    cluster_.start_apiserver();
    cluster_.start_hub();
  }

  // kubelet lists its node's pods through the hub, which caches them.
  void kubelet_lists_its_pods() {
    const double ops = cluster_.cache_ops();
    ASSERT_EQ(
        kubelet_get(cluster_.proxy_port(), "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1")
            .status,
        200);
    ASSERT_TRUE(cluster_.wait_cache_committed(ops));
  }
  HttpResponse admin(const std::string& method, const std::string& target) {
    return http_request(cluster_.admin_port(), method, target);
  }
  // A pod's field at the apiserver (kubectl's jsonpath), or "absent" when it is gone.
  std::string pod_field(const std::string& pod, const std::string& jsonpath) {
    auto got =
        cluster_.kubectl_direct({"get", "pod", pod, "-n", "default", "-o", "jsonpath=" + jsonpath});
    if (got.exit_code != 0)
      return got.err.find("NotFound") != std::string::npos ? "absent" : got.err;
    return got.out;
  }
  double counted(const std::string& endpoint, int code) {
    return cluster_.metric("node_yurthub_ota_requests_total{endpoint=\"" + endpoint + "\",code=\"" +
                           std::to_string(code) + "\"}");
  }

  Cluster cluster_{options()};
};

TEST_F(Ota, PodsListsWhatKubeletCached) {
  kubelet_lists_its_pods();
  const HttpResponse pods = admin("GET", "/pods");
  ASSERT_EQ(pods.status, 200) << pods.body;
  EXPECT_THAT(pods.headers, HasSubstr("application/json"));
  EXPECT_THAT(pods.body, testing::StartsWith(
                             R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":[)"));
  EXPECT_THAT(pods.body, HasSubstr(R"("name":"agent-upgrade")"));
  EXPECT_THAT(pods.body, HasSubstr(R"("name":"web-0")"));
  EXPECT_THAT(pods.body, testing::Not(HasSubstr(R"("name":"web-1")"))) << "another node's pod";
  EXPECT_EQ(admin("POST", "/pods").status, 405);
}

TEST_F(Ota, UpgradeDeletesTheDaemonSetPodAtTheApiserver) {
  const HttpResponse upgraded = admin("POST", kPodPath + "agent-upgrade/upgrade");
  EXPECT_EQ(upgraded.status, 200) << upgraded.body;
  EXPECT_EQ(upgraded.body, "Start updating pod default/agent-upgrade");
  EXPECT_THAT(upgraded.headers, HasSubstr("application/json"));
  EXPECT_EQ(pod_field("agent-upgrade", "{.metadata.name}"), "absent");
  EXPECT_EQ(counted("upgrade", 200), 1);
}

TEST_F(Ota, APodThatNeedsNoUpgradeIsRefused) {
  const HttpResponse refused = admin("POST", kPodPath + "agent-current/upgrade");
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.body,
            "Pre check update pod failed, Failed to check pod default/agent-current status, "
            "error: Pod: default/agent-current update status is False, can not be updated");
  EXPECT_EQ(pod_field("agent-current", "{.metadata.name}"), "agent-current");
  const HttpResponse pull = admin("POST", kPodPath + "agent-current/imagepull");
  EXPECT_EQ(pull.status, 403);
  EXPECT_THAT(pull.body, HasSubstr("Failed to check pod status default/agent-current, error: "));
  EXPECT_EQ(admin("POST", kPodPath + "no-such-pod/upgrade").status, 500);
  EXPECT_EQ(counted("upgrade", 403), 1);
}

TEST_F(Ota, AStaticPodWithoutItsConfigMapIsRefused) {
  const HttpResponse refused =
      admin("POST", "/openyurt.io/v1/namespaces/kube-system/pods/edge-agent-edge-node-1/upgrade");
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.body, "Configmap for static pod does not exist");
}

TEST_F(Ota, ImagePullSetsThePodsImageReadyConditionThenUpgradeWaitsForIt) {
  const HttpResponse pull = admin("POST", kPodPath + "agent-pull/imagepull");
  EXPECT_EQ(pull.status, 200) << pull.body;
  EXPECT_EQ(pull.body, "Image pre-pull requested for pod default/agent-pull");
  const std::string condition = "{.status.conditions[?(@.type==\"PodImageReady\")]";
  EXPECT_EQ(pod_field("agent-pull", condition + ".status}"), "False");
  EXPECT_EQ(pod_field("agent-pull", condition + ".message}"), "controllerrevision: agent-7d9f");
  EXPECT_EQ(pod_field("agent-pull", "{.status.conditions[0].type}"), "PodNeedUpgrade")
      << "the other conditions stay";
  // The image is not pulled yet (yurt-manager's job pulls it and sets True): no upgrade.
  const HttpResponse upgrade = admin("POST", kPodPath + "agent-pull/upgrade");
  EXPECT_EQ(upgrade.status, 403);
  EXPECT_THAT(upgrade.body, HasSubstr("image is not ready"));
  EXPECT_EQ(pod_field("agent-pull", "{.metadata.name}"), "agent-pull");
}

TEST_F(Ota, ANonRootCallerIsRefusedOnAllThree) {
  kubelet_lists_its_pods();
  const std::string base = "http://127.0.0.1:" + std::to_string(cluster_.admin_port());
  for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/pods"},
           {"POST", kPodPath + "agent-upgrade/upgrade"},
           {"POST", kPodPath + "agent-pull/imagepull"}}) {
    const std::string out =
        run_command(as_user(kNobody, {"/usr/bin/curl", "-s", "-w", "\n%{http_code}", "-X", method,
                                      base + path}),
                    std::chrono::seconds(20))
            .out;
    EXPECT_THAT(out, testing::EndsWith("\n403")) << path << ": " << out;
    EXPECT_THAT(out, HasSubstr("only to root or the hub's own user")) << path;
  }
  EXPECT_EQ(pod_field("agent-upgrade", "{.metadata.name}"), "agent-upgrade");
  EXPECT_EQ(pod_field("agent-pull", "{.status.conditions[?(@.type==\"PodImageReady\")].status}"),
            "");
  EXPECT_EQ(counted("pods", 403), 1);
  EXPECT_THAT(cluster_.hub().log(), HasSubstr("ota: refused /pods to uid 65534"));
}

TEST_F(Ota, OfflineThePostsAnswer503AndPodsAnswersFromTheCache) {
  kubelet_lists_its_pods();
  cluster_.stop_apiserver(SIGKILL);
  ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(false));
  for (const char* action : {"upgrade", "imagepull"}) {
    const HttpResponse refused = admin("POST", kPodPath + "agent-upgrade/" + action);
    EXPECT_EQ(refused.status, 503) << action;
    EXPECT_EQ(refused.body, "OTA upgrade is not allowed when node is disconnected to cloud");
  }
  const HttpResponse pods = admin("GET", "/pods");
  EXPECT_EQ(pods.status, 200);
  EXPECT_THAT(pods.body, HasSubstr(R"("name":"agent-upgrade")"));
}

}  // namespace
}  // namespace yurthub::test
