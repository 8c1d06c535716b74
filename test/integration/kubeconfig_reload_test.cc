// The hub following credentials that someone else renews in its kubeconfig (issue 16): kubelet's
// rotated client certificate in --bootstrap-mode=kubeletcertificate, and a `tokenFile` rewritten
// under a plain --kubeconfig. The real yurthub against the fake apiserver, driven by kubectl.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "test/integration/cluster.h"

namespace yurthub::test {
namespace {

// --bootstrap-mode=kubeletcertificate: the hub uses kubelet's kubeconfig and follows the
// certificate kubelet rotates under it.
TEST(CertificateKubelet, FollowsTheCertificateKubeletRotates) {
  ClusterOptions o = demo_cluster();
  o.hub_kubeconfig = false;
  o.hub_flags = {"--bootstrap-mode=kubeletcertificate", "--kubeconfig={dir}/kubelet.conf"};
  Cluster cluster(o);
  const std::string d = cluster.dir();
  // A client certificate for the node as kubelet keeps it: certificate and key in one file.
  const auto issue = [&](const std::string& days) {
    return run_command(
        {"/bin/sh", "-c",
         "cd " + d +
             " && openssl ecparam -name prime256v1 -genkey -noout -out n.key && "
             "openssl req -new -key n.key -subj '/O=system:nodes/CN=system:node:edge-node-1' "
             "-out n.csr && printf 'extendedKeyUsage=clientAuth\\n' > n.ext && "
             "openssl x509 -req -in n.csr -CA pki/ca.crt -CAkey pki/ca.key -CAcreateserial -days " +
             days + " -extfile n.ext -out n.crt 2>/dev/null && cat n.crt n.key > pem.tmp && " +
             "mv pem.tmp kubelet-client-current.pem"},
        std::chrono::seconds(20));
  };
  ASSERT_EQ(issue("30").exit_code, 0);
  cluster.start_apiserver();
  cluster.write_kubeconfig(d + "/kubelet.conf",
                           {{"client-certificate", d + "/kubelet-client-current.pem"},
                            {"client-key", d + "/kubelet-client-current.pem"}});
  cluster.start_hub();
  auto pods = cluster.kubectl({"get", "pods", "-A", "-o", "name"});
  ASSERT_EQ(pods.exit_code, 0) << pods.err;
  const std::string expiry = "node_yurthub_client_certificate_expiry_timestamp_seconds";
  const double first = cluster.metric(expiry);
  EXPECT_GT(first, 0);

  ASSERT_EQ(issue("60").exit_code, 0);  // kubelet rotated its certificate
  ASSERT_TRUE(
      eventually([&] { return cluster.metric(expiry) > first + 86400; }, std::chrono::seconds(20)))
      << cluster.hub().log();
  pods = cluster.kubectl({"get", "pods", "-A", "-o", "name"});
  EXPECT_EQ(pods.exit_code, 0) << pods.err;
}

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
