// The hub following credentials that someone else renews in its kubeconfig (issue 16): a
// `tokenFile` rewritten under a plain --kubeconfig (kubelet's rotated certificate is in
// kubelet_certificate_test.cc). The real yurthub against the fake apiserver, driven by kubectl.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "test/integration/cluster.h"

namespace yurthub::test {
namespace {

// A --kubeconfig whose user reads its bearer token from `tokenFile` (a projected or rotated token):
// the hub sends what the file holds now, as client-go re-reads it, not what it held at start.
TEST(CertificateKubeconfig, FollowsATokenFileThatIsRewritten) {
  ClusterOptions o = demo_cluster();
  o.hub_kubeconfig = false;
  o.hub_flags = {"--kubeconfig={dir}/token.conf"};
  Cluster cluster(o);
  const std::string d = cluster.dir();
  const auto write_token = [&](const std::string& token) {
    std::ofstream(d + "/hub-token.tmp") << token << "\n";
    std::filesystem::rename(d + "/hub-token.tmp", d + "/hub-token");
  };
  write_token("admin-token-0123456789");  // tokens.csv (scripts/gen-certs.sh): user admin
  cluster.start_apiserver();
  cluster.write_kubeconfig(d + "/token.conf", {{"tokenFile", d + "/hub-token"}});
  cluster.start_hub();
  const auto whoami = [&] {
    return cluster.kubectl({"auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"}).out;
  };
  EXPECT_EQ(whoami(), "admin");

  write_token("pod-token-0123456789");  // the token was rotated: user system:serviceaccount:...
  ASSERT_TRUE(eventually([&] { return whoami() == "system:serviceaccount:default:web"; },
                         std::chrono::seconds(25)))
      << whoami() << "\n"
      << cluster.hub().log();
}

}  // namespace
}  // namespace yurthub::test
