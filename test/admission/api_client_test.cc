// admission/api_client: where the labeller's apiserver and identity come from (a kubeconfig, or
// the pod's service account as client-go's in-cluster config finds it), and what is refused.
// Talking to an apiserver is in test/integration/pool_admission_test.cc.
#include "admission/api_client.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace yurthub::admission {
namespace {

class ApiClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pool-admission-client-test-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    const std::string cmd =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " +
        dir_ + "/ca.key -out " + dir_ + "/ca.crt -subj /CN=ca -days 1 >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    std::ofstream(dir_ + "/token") << "sa-token\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Result<std::shared_ptr<const ApiClient>> kubeconfig_for(const std::string& server) {
    std::ofstream(dir_ + "/kc")
        << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
        << "    server: " << server << "\n    certificate-authority: ca.crt\n"
        << "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
        << "current-context: x\nusers:\n- name: u\n  user: {token: t}\n";
    return ApiClient::from_kubeconfig(dir_ + "/kc");
  }

  std::string dir_;
};

TEST_F(ApiClientTest, InClusterAsClientGoFindsIt) {
  auto client = ApiClient::in_cluster("10.96.0.1", "443", dir_);
  ASSERT_TRUE(client) << client.error().message;
  EXPECT_EQ((*client)->server_url(), "https://10.96.0.1:443");
  auto v6 = ApiClient::in_cluster("fd00::1", "6443", dir_);
  ASSERT_TRUE(v6) << v6.error().message;
  EXPECT_EQ((*v6)->server_url(), "https://[fd00::1]:6443");

  auto outside = ApiClient::in_cluster("", "", dir_);
  ASSERT_FALSE(outside);
  EXPECT_NE(outside.error().message.find("KUBERNETES_SERVICE_HOST"), std::string::npos);
  std::filesystem::remove(dir_ + "/token");
  auto no_token = ApiClient::in_cluster("10.96.0.1", "443", dir_);
  ASSERT_FALSE(no_token);
  EXPECT_NE(no_token.error().message.find("/token"), std::string::npos);
}

TEST_F(ApiClientTest, KubeconfigServers) {
  struct Case {
    std::string server;
    std::string url;  // "" when refused
  };
  const Case cases[] = {
      {"https://10.0.0.1:6443", "https://10.0.0.1:6443"},
      {"https://apiserver.example", "https://apiserver.example:443"},
      {"https://[::1]:6443/", "https://[::1]:6443"},
      {"http://10.0.0.1:8080", ""},
      {"https://10.0.0.1:6443/prefix", ""},
      {"https://10.0.0.1:x", ""},
      {"https://[::1", ""},
  };
  for (const Case& c : cases) {
    auto client = kubeconfig_for(c.server);
    if (c.url.empty()) {
      EXPECT_FALSE(client) << c.server;
      continue;
    }
    ASSERT_TRUE(client) << c.server << ": " << client.error().message;
    EXPECT_EQ((*client)->server_url(), c.url);
  }
}

}  // namespace
}  // namespace yurthub::admission
