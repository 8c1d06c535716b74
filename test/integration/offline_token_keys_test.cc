// Offline, a service-account token the node never saw is verified by the issuer's keys (issue 30,
// docs/security.md): kubelet renews pods' projected tokens while the cloud is away, and the new
// token must still read what its service account read online. With the real binary against the
// fake apiserver, which signs its tokens RS256 and publishes its keys like kube-apiserver: a
// token the cloud issued but the hub never saw reads the service account's cached ConfigMaps
// offline; a forged one is refused. Without the RBAC grant the hub says how to give it and keeps
// refusing such tokens, as before.
#include <signal.h>

#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/base64.h"
#include "test/integration/cluster.h"
#include "test/integration/http_client.h"

namespace yurthub::test {
namespace {

using testing::HasSubstr;
using testing::Not;

constexpr const char* kApp = "ops-tool/1.0";  // a cache agent (yurt-hub-cfg below)
const std::string kConfigMaps = "/api/v1/namespaces/default/configmaps";

class OfflineTokenKeys : public testing::Test {
 protected:
  void start(bool grant_nodes) {
    ClusterOptions o = https_demo_cluster();
    if (grant_nodes) {
      o.apiserver_flags.push_back("--issuer-discovery-groups=system:serviceaccounts,system:nodes");
    }
    cluster_ = std::make_unique<Cluster>(o);
    cluster_->start_apiserver();
    auto applied = cluster_->kubectl_direct(
        {"apply", "-f", "-"}, std::chrono::seconds(30),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yurt-hub-cfg\n"
        "  namespace: kube-system\ndata:\n  cache_agents: ops-tool\n");
    ASSERT_EQ(applied.exit_code, 0) << applied.err;
    cluster_->start_hub();
  }
  // A token of default/default bound to pod web-0, issued by the cloud (not through the hub),
  // for the apiserver's audience: a TokenRequest as kubelet makes it (JSON: the fake reads no
  // protobuf, which `kubectl create token` sends).
  std::string issue_token(int seconds = 3607) {
    auto made = cluster_->kubectl_direct(
        {"create", "--raw", "/api/v1/namespaces/default/serviceaccounts/default/token", "-f", "-"},
        std::chrono::seconds(20),
        R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{)"
        R"("expirationSeconds":)" +
            std::to_string(seconds) +
            R"(,"boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"web-0"}}})");
    EXPECT_EQ(made.exit_code, 0) << made.err;
    const std::string key = "\"token\":\"";
    const auto at = made.out.find(key);
    if (at == std::string::npos) return "";
    const auto start = at + key.size();
    return made.out.substr(start, made.out.find('"', start) - start);
  }
  HttpResponse read(const std::string& token) {
    return http_request(cluster_->proxy_port(), "GET", kConfigMaps,
                        {{"User-Agent", kApp}, {"Authorization", "Bearer " + token}});
  }
  // Online: kubelet reads its pod; the service account lists ConfigMaps with its first token.
  void online_then_cut(const std::string& first_token) {
    const double ops = cluster_->cache_ops();
    ASSERT_EQ(http_request(cluster_->proxy_port(), "GET", "/api/v1/namespaces/default/pods/web-0",
                           {{"User-Agent", kKubeletAgent}})
                  .status,
              200);
    auto listed = read(first_token);
    ASSERT_EQ(listed.status, 200) << listed.body;
    ASSERT_THAT(listed.body, HasSubstr("kube-root-ca.crt"));
    ASSERT_TRUE(cluster_->wait_cache_committed(ops));
    cluster_->apiserver().signal(SIGSTOP);
    ASSERT_TRUE(cluster_->wait_hub_sees_apiserver(false, std::chrono::seconds(15)));
  }
  std::unique_ptr<Cluster> cluster_;
};

TEST_F(OfflineTokenKeys, ATokenIssuedWhileTheHubWasNotLookingReadsItsServiceAccountsData) {
  start(true);
  const std::string keys = "node_yurthub_service_account_keys_available";
  for (int i = 0; i < 150 && cluster_->metric(keys) != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(cluster_->metric(keys), 1) << cluster_->hub().log();
  // kubelet's next token, never sent through the hub (another lifetime: tokens of one second
  // with the same claims are the same token).
  const std::string rotated = issue_token(7200);
  online_then_cut(issue_token());

  auto offline = read(rotated);
  EXPECT_EQ(offline.status, 200) << offline.body;
  EXPECT_THAT(offline.body, HasSubstr("kube-root-ca.crt"));
  EXPECT_EQ(
      cluster_->metric(R"(node_yurthub_offline_callers_total{verdict="service_account_signed"})"),
      1);
  // The same claims for another service account, with the rotated token's signature: refused.
  const auto first = rotated.find('.');
  const auto second = rotated.find('.', first + 1);
  auto claims = base::decode_base64url(rotated.substr(first + 1, second - first - 1));
  ASSERT_TRUE(claims);
  std::string forged_claims = *claims;
  forged_claims.replace(forged_claims.find("\"name\":\"default\""), 16, "\"name\":\"admin\"");
  const std::string forged =
      rotated.substr(0, first + 1) + base::encode_base64url(forged_claims) + rotated.substr(second);
  auto refused = read(forged);
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_THAT(refused.body, Not(HasSubstr("kube-root-ca.crt")));
  cluster_->apiserver().signal(SIGCONT);
}

TEST_F(OfflineTokenKeys, WithoutTheGrantTheHubSaysHowAndRefusesTokensItNeverSaw) {
  start(false);
  const std::string rotated = issue_token(7200);
  ASSERT_TRUE(eventually(
      [&] { return cluster_->hub().log().find("Bind ClusterRole") != std::string::npos; },
      std::chrono::seconds(20)))
      << cluster_->hub().log();
  EXPECT_EQ(cluster_->metric("node_yurthub_service_account_keys_available"), 0);
  online_then_cut(issue_token());
  EXPECT_EQ(read(rotated).status, 503);
  cluster_->apiserver().signal(SIGCONT);
}

}  // namespace
}  // namespace yurthub::test
