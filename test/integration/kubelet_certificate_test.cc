// The hub as today's OpenYurt installs it (issue 31): --bootstrap-mode=kubeletcertificate, with
// kubelet's kubeconfig and client certificate. It follows the certificate kubelet rotates; it
// serves 10268 with a kubernetes.io/kubelet-serving certificate it requests as kubelet, renews it,
// and requests it again when kubelet's identity changes; and while no certificate is issued it
// still serves kubelet on 10261. The real yurthub against the fake apiserver's CSR API, driven by
// kubectl and openssl.
#include <gtest/gtest.h>

#include "test/integration/cluster.h"

namespace yurthub::test {
namespace {

constexpr const char* kPodToken = "pod-token-0123456789";
constexpr const char* kRenewed =
    R"(node_yurthub_server_certificate_renewals_total{result="success"})";

ClusterOptions kubelet_mode_cluster(int certificate_seconds, bool auto_approve) {
  ClusterOptions o = demo_cluster();
  o.hub_kubeconfig = false;
  o.hub_https_by_csr = true;
  o.apiserver_flags = {"--csr-signing-cert={dir}/pki/ca.crt", "--csr-signing-key={dir}/pki/ca.key",
                       std::string("--csr-auto-approve=") + (auto_approve ? "true" : "false"),
                       "--csr-cert-lifetime-seconds=" + std::to_string(certificate_seconds)};
  o.hub_flags = {"--bootstrap-mode=kubeletcertificate", "--kubeconfig={dir}/kubelet.conf",
                 "--root-dir={dir}/root", "--node-ip=192.0.2.7"};
  return o;
}

// A client certificate for `node` as kubelet keeps it, certificate and key in one file, put in
// place the way kubelet's rotation does (written aside, then renamed).
CommandResult issue_kubelet_certificate(const Cluster& cluster, const std::string& node,
                                        const std::string& days) {
  return run_command(
      {"/bin/sh", "-c",
       "cd " + cluster.dir() +
           " && openssl ecparam -name prime256v1 -genkey -noout -out n.key && "
           "openssl req -new -key n.key -subj '/O=system:nodes/CN=system:node:" +
           node +
           "' -out n.csr && printf 'extendedKeyUsage=clientAuth\\n' > n.ext && "
           "openssl x509 -req -in n.csr -CA pki/ca.crt -CAkey pki/ca.key -CAcreateserial -days " +
           days + " -extfile n.ext -out n.crt 2>/dev/null && cat n.crt n.key > pem.tmp && " +
           "mv pem.tmp kubelet-client-current.pem"},
      std::chrono::seconds(20));
}

// kubelet's certificate for edge-node-1, the apiserver, and kubelet's kubeconfig naming both.
void start_kubelet_node(Cluster& cluster) {
  ASSERT_EQ(issue_kubelet_certificate(cluster, "edge-node-1", "30").exit_code, 0);
  cluster.start_apiserver();
  const std::string pem = cluster.dir() + "/kubelet-client-current.pem";
  cluster.write_kubeconfig(cluster.dir() + "/kubelet.conf",
                           {{"client-certificate", pem}, {"client-key", pem}});
}

// The subject and names of the HTTPS port's certificate as stored, as openssl prints them.
std::string serving_certificate(const Cluster& cluster) {
  return run_command({"/usr/bin/openssl", "x509", "-noout", "-subject", "-ext", "subjectAltName",
                      "-in", cluster.dir() + "/root/pki/yurthub-server-current.pem"},
                     std::chrono::seconds(10))
      .out;
}

// "<signer> <requesting user>" of every CSR the apiserver has, one per line.
std::string csr_requests(Cluster& cluster) {
  return cluster
      .kubectl_direct(
          {"get", "csr", "-o",
           R"(jsonpath={range .items[*]}{.spec.signerName} {.spec.username}{"\n"}{end})"})
      .out;
}

TEST(KubeletCertificateMode, FollowsTheCertificateKubeletRotates) {
  Cluster cluster(kubelet_mode_cluster(3600, true));
  start_kubelet_node(cluster);
  cluster.start_hub();
  auto pods = cluster.kubectl({"get", "pods", "-A", "-o", "name"});
  ASSERT_EQ(pods.exit_code, 0) << pods.err;
  const std::string expiry = "node_yurthub_client_certificate_expiry_timestamp_seconds";
  const double first = cluster.metric(expiry);
  EXPECT_GT(first, 0);

  ASSERT_EQ(issue_kubelet_certificate(cluster, "edge-node-1", "60").exit_code, 0);  // rotated
  ASSERT_TRUE(
      eventually([&] { return cluster.metric(expiry) > first + 86400; }, std::chrono::seconds(20)))
      << cluster.hub().log();
  pods = cluster.kubectl({"get", "pods", "-A", "-o", "name"});
  EXPECT_EQ(pods.exit_code, 0) << pods.err;
}

// What node-servant's conversion gives a node: pods reach the hub on 10268 and verify it with
// their service account's ca.crt, under the node's IP too; the certificate is kubelet's to ask
// for, and it is renewed before it expires.
TEST(KubeletCertificateMode, ServesTheHttpsPortWithAKubeletServingCertificateItRenews) {
  Cluster cluster(kubelet_mode_cluster(20, true));
  start_kubelet_node(cluster);
  cluster.start_hub();
  auto pods = cluster.pod_kubectl({"get", "pods", "-n", "default", "-o", "name"}, kPodToken);
  ASSERT_EQ(pods.exit_code, 0) << pods.err << cluster.hub().log();
  EXPECT_NE(pods.out.find("pod/web-0"), std::string::npos);
  auto by_node_ip = cluster.pod_kubectl(
      {"--tls-server-name=192.0.2.7", "get", "pods", "-n", "default", "-o", "name"}, kPodToken);
  EXPECT_EQ(by_node_ip.exit_code, 0) << by_node_ip.err;
  // Without a token: 401 (kubectl, having no credentials, gives up and says EOF).
  const std::string unauthorized = R"(node_yurthub_request_failures_total{reason="unauthorized"})";
  const double refused_before = cluster.metric(unauthorized);
  auto anonymous = cluster.pod_kubectl({"get", "pods", "-n", "default"}, "");
  EXPECT_NE(anonymous.exit_code, 0);
  EXPECT_EQ(anonymous.out.find("web-0"), std::string::npos);
  EXPECT_GT(cluster.metric(unauthorized), refused_before);

  const std::string names = serving_certificate(cluster);
  EXPECT_NE(names.find("CN = system:node:edge-node-1"), std::string::npos) << names;
  EXPECT_NE(names.find("O = system:nodes"), std::string::npos) << names;
  EXPECT_NE(names.find("IP Address:192.0.2.7"), std::string::npos) << names;
  EXPECT_NE(names.find("IP Address:10.96.0.1"), std::string::npos) << names;  // kubernetes Service
  EXPECT_NE(csr_requests(cluster).find("kubernetes.io/kubelet-serving system:node:edge-node-1"),
            std::string::npos)
      << csr_requests(cluster);

  const double renewed = cluster.metric(kRenewed);
  const double expires = cluster.metric("node_yurthub_server_certificate_expiry_timestamp_seconds");
  ASSERT_TRUE(
      eventually([&] { return cluster.metric(kRenewed) > renewed; }, std::chrono::seconds(40)))
      << cluster.hub().log();
  EXPECT_GT(cluster.metric("node_yurthub_server_certificate_expiry_timestamp_seconds"), expires);
  pods = cluster.pod_kubectl({"get", "pods", "-n", "default", "-o", "name"}, kPodToken);
  EXPECT_EQ(pods.exit_code, 0) << pods.err;
}

// A cluster where nobody approves kubelet-serving CSRs yet: kubelet keeps its hub on 10261, readyz
// says what is missing, 10268 closes its connections; approved later, the port serves.
TEST(KubeletCertificateMode, AnUnapprovedServingCertificateLeavesKubeletServed) {
  Cluster cluster(kubelet_mode_cluster(3600, false));
  start_kubelet_node(cluster);
  cluster.start_hub(/*wait_ready=*/false);
  auto pods = cluster.kubectl({"get", "pods", "-A", "-o", "name"});
  ASSERT_EQ(pods.exit_code, 0) << pods.err << cluster.hub().log();
  int code = 0;
  std::string readyz;
  ASSERT_TRUE(eventually(
      [&] {
        readyz = cluster.admin_get("/v1/readyz", &code);
        return readyz.find("serving certificate") != std::string::npos;
      },
      std::chrono::seconds(20)))
      << readyz;
  EXPECT_EQ(code, 500);
  EXPECT_NE(cluster.pod_kubectl({"get", "pods", "-n", "default"}, kPodToken).exit_code, 0);

  std::string pending;
  ASSERT_TRUE(eventually(
      [&] {
        pending = cluster.kubectl_direct({"get", "csr", "-o", "name"}).out;
        return !pending.empty();
      },
      std::chrono::seconds(20)));
  auto approved =
      cluster.kubectl_direct({"certificate", "approve", pending.substr(0, pending.find('\n'))});
  ASSERT_EQ(approved.exit_code, 0) << approved.err;
  ASSERT_TRUE(eventually(
      [&] {
        return cluster.pod_kubectl({"get", "pods", "-n", "default", "-o", "name"}, kPodToken)
                   .exit_code == 0;
      },
      std::chrono::seconds(30)))
      << cluster.hub().log();
  cluster.admin_get("/v1/readyz", &code);
  EXPECT_EQ(code, 200);
}

// kubelet's client certificate rotates to another node's identity: the serving certificate is
// requested again, as that identity and naming it.
TEST(KubeletCertificateMode, ANewKubeletIdentityGetsAServingCertificateUnderIt) {
  Cluster cluster(kubelet_mode_cluster(3600, true));
  start_kubelet_node(cluster);
  cluster.start_hub();
  ASSERT_NE(serving_certificate(cluster).find("CN = system:node:edge-node-1"), std::string::npos);
  ASSERT_EQ(issue_kubelet_certificate(cluster, "edge-node-2", "30").exit_code, 0);
  ASSERT_TRUE(eventually(
      [&] {
        return serving_certificate(cluster).find("CN = system:node:edge-node-2") !=
               std::string::npos;
      },
      std::chrono::seconds(30)))
      << serving_certificate(cluster) << cluster.hub().log();
  EXPECT_NE(csr_requests(cluster).find("kubernetes.io/kubelet-serving system:node:edge-node-2"),
            std::string::npos)
      << csr_requests(cluster);
  auto pods = cluster.pod_kubectl({"get", "pods", "-n", "default", "-o", "name"}, kPodToken);
  EXPECT_EQ(pods.exit_code, 0) << pods.err;
}

}  // namespace
}  // namespace yurthub::test
