// The hub's own certificate, end to end (issue 16): the real yurthub bootstraps with a bootstrap
// token against the fake apiserver's CSR API (auto-approved, signed by the test CA, 20-second
// certificates), serves kubectl with the issued identity, renews while a watch is open without
// dropping it, keeps working after the first certificate expired, takes a join token on
// /v1/token (and recovers with it when certificate and token both died offline), serves 10268 to
// pods with a certificate by CSR, and forgets another cluster's certificates.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include <gtest/gtest.h>

#include "test/integration/cluster.h"
#include "test/integration/http_client.h"

namespace yurthub::test {
namespace {

constexpr const char* kToken = "abcdef.0123456789abcdef";

constexpr const char* kTokenSecret = R"(apiVersion: v1
kind: Secret
metadata:
  name: bootstrap-token-abcdef
  namespace: kube-system
type: bootstrap.kubernetes.io/token
stringData:
  token-id: abcdef
  token-secret: 0123456789abcdef
  usage-bootstrap-authentication: "true"
  usage-bootstrap-signing: "true"
  auth-extra-groups: system:bootstrappers:kubeadm:default-node-token
)";

ClusterOptions bootstrap_cluster() {
  ClusterOptions o = demo_cluster();
  o.hub_kubeconfig = false;
  o.hub_https_by_csr = true;
  o.apiserver_flags = {"--csr-signing-cert={dir}/pki/ca.crt", "--csr-signing-key={dir}/pki/ca.key",
                       "--csr-auto-approve=true", "--csr-cert-lifetime-seconds=20",
                       "--cluster-info-server=self"};
  o.hub_flags = {"--bootstrap-file={dir}/bootstrap.conf", "--root-dir={dir}/root"};
  return o;
}

// Starts `cluster`'s apiserver with the bootstrap token's Secret, and writes the bootstrap
// kubeconfig the hub's --bootstrap-file names.
void start_for_bootstrap(Cluster& cluster) {
  cluster.start_apiserver();
  auto created =
      cluster.kubectl_direct({"create", "-f", "-"}, std::chrono::seconds(20), kTokenSecret);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  cluster.write_kubeconfig(cluster.dir() + "/bootstrap.conf", {{"token", kToken}});
}

// POST /v1/token on the admin port with `body`, as an operator would; the raw answer.
std::string post_token(const Cluster& cluster, const std::string& body) {
  return raw_http(cluster.admin_port(),
                  "POST /v1/token HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                  "Content-Type: application/json\r\nContent-Length: " +
                      std::to_string(body.size()) + "\r\n\r\n" + body);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

constexpr const char* kExpiry = "node_yurthub_client_certificate_expiry_timestamp_seconds";

double unix_now() {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count());
}

// Waits (up to 30 s) until the hub's client certificate has expired.
bool wait_certificate_expired(const Cluster& cluster) {
  return eventually([&] { return unix_now() > cluster.metric(kExpiry) + 1; },
                    std::chrono::seconds(30));
}

class CertificateBootstrap : public ::testing::Test {
 protected:
  CertificateBootstrap() : cluster_(bootstrap_cluster()) {}

  void SetUp() override { start_for_bootstrap(cluster_); }

  // The subject of the hub's current certificate, as openssl prints it.
  std::string current_subject() {
    auto out = run_command({"/usr/bin/openssl", "x509", "-noout", "-subject", "-in",
                            cluster_.dir() + "/root/pki/yurthub-current.pem"},
                           std::chrono::seconds(10));
    return out.out;
  }

  Cluster cluster_;
};

// Issue 30: whoever can write the root dir may plant a link at a credential's temporary name; the
// hub writing its CA and its private key never follows it (the target stays as it was) and
// leaves no temporary file behind.
TEST_F(CertificateBootstrap, LinksPlantedAtTheTemporaryNamesAreNeverFollowed) {
  const std::string pki = cluster_.dir() + "/root/pki";
  std::filesystem::create_directories(pki);
  const std::string target = cluster_.dir() + "/attacker-owned";
  std::ofstream(target) << "untouched";
  std::filesystem::create_symlink(target, pki + "/ca.crt.tmp");
  std::filesystem::create_symlink(target, cluster_.dir() + "/root/yurthub.conf.tmp");
  cluster_.start_hub();
  auto pods = cluster_.kubectl({"get", "pods", "-n", "default", "-o", "name"});
  EXPECT_EQ(pods.exit_code, 0) << pods.err << cluster_.hub().log();
  EXPECT_EQ(read_text(target), "untouched");
  EXPECT_EQ(read_text(pki + "/ca.crt"), read_text(cluster_.dir() + "/pki/ca.crt"));
  EXPECT_FALSE(std::filesystem::is_symlink(pki + "/ca.crt"));
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(cluster_.dir() + "/root")) {
    EXPECT_FALSE(entry.path().string().ends_with(".tmp")) << entry.path();
  }
}

TEST_F(CertificateBootstrap, TokenBootstrapRenewalDuringAWatchAndAfterExpiry) {
  cluster_.start_hub();
  EXPECT_NE(current_subject().find("CN = system:node:edge-node-1"), std::string::npos)
      << current_subject();
  EXPECT_NE(current_subject().find("O = openyurt:yurthub"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(cluster_.dir() + "/root/yurthub.conf"));
  auto pods = cluster_.kubectl({"get", "pods", "-A", "-o", "name"});
  ASSERT_EQ(pods.exit_code, 0) << pods.err;
  EXPECT_NE(pods.out.find("pod/web-0"), std::string::npos);

  WatchStream watch(cluster_.proxy_port(), "/api/v1/namespaces/default/configmaps?watch=true");
  ASSERT_TRUE(watch.wait_for_header(std::chrono::seconds(10)));
  const std::string renewals =
      R"(node_yurthub_client_certificate_renewals_total{result="success"})";
  const double renewed_before = cluster_.metric(renewals);
  const std::string serving_renewals =
      R"(node_yurthub_server_certificate_renewals_total{result="success"})";
  const double serving_before = cluster_.metric(serving_renewals);
  const double serving_expires_at =
      cluster_.metric("node_yurthub_server_certificate_expiry_timestamp_seconds");
  const double expires_at = cluster_.metric(kExpiry);
  EXPECT_GT(expires_at, 0);
  // Renewed by half the remaining 20 s at the latest.
  ASSERT_TRUE(eventually([&] { return cluster_.metric(renewals) > renewed_before; },
                         std::chrono::seconds(30)))
      << cluster_.hub().log();
  EXPECT_GT(cluster_.metric(kExpiry), expires_at);

  // The watch opened with the first certificate still streams.
  auto made = cluster_.kubectl_direct(
      {"create", "-f", "-"}, std::chrono::seconds(20),
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: after-renewal\n  namespace: default\n");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_TRUE(eventually(
      [&] {
        for (const auto& event : watch.events()) {
          if (event.find("after-renewal") != std::string::npos) return true;
        }
        return false;
      },
      std::chrono::seconds(10)));
  EXPECT_FALSE(watch.ended());

  // Once the certificate the watch was opened with has expired, requests still go through: the
  // pool does not reuse connections made with it.
  std::this_thread::sleep_until(
      std::chrono::system_clock::time_point(std::chrono::seconds(static_cast<long>(expires_at))) +
      std::chrono::seconds(1));
  auto later =
      cluster_.kubectl({"get", "configmap", "after-renewal", "-n", "default", "-o", "name"});
  EXPECT_EQ(later.exit_code, 0) << later.err << cluster_.hub().log();
  // The HTTPS port's certificate is renewed the same way; once the one it served with has
  // expired, a pod still connects and verifies the new one.
  ASSERT_TRUE(eventually([&] { return cluster_.metric(serving_renewals) > serving_before; },
                         std::chrono::seconds(30)));
  std::this_thread::sleep_until(std::chrono::system_clock::time_point(
                                    std::chrono::seconds(static_cast<long>(serving_expires_at))) +
                                std::chrono::seconds(1));
  auto pod = cluster_.pod_kubectl({"get", "configmap", "after-renewal", "-n", "default"},
                                  "pod-token-0123456789");
  EXPECT_EQ(pod.exit_code, 0) << pod.err;
  // About one renewal per 10 s, never a loop.
  EXPECT_LE(cluster_.metric(renewals), 6);
}

// The pin of the test CA, computed as kubeadm documents it.
std::string ca_pin(const Cluster& cluster) {
  auto out = run_command({"/bin/sh", "-c",
                          "openssl x509 -pubkey -in " + cluster.dir() +
                              "/pki/ca.crt | openssl pkey -pubin -outform der | openssl dgst "
                              "-sha256 -hex | sed 's/^.* //'"},
                         std::chrono::seconds(10));
  std::string hex = out.out.substr(0, out.out.find_first_of(" \n"));
  return "sha256:" + hex;
}

ClusterOptions join_token_cluster() {
  ClusterOptions o = bootstrap_cluster();
  o.hub_flags = {"--join-token=abcdef.0123456789abcdef", "--root-dir={dir}/root"};
  return o;
}

TEST(CertificateJoinToken, DiscoversTheCaThroughClusterInfoAndChecksThePin) {
  Cluster cluster(join_token_cluster());
  cluster.start_apiserver();
  auto created =
      cluster.kubectl_direct({"create", "-f", "-"}, std::chrono::seconds(20), kTokenSecret);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  cluster.add_hub_flag("--discovery-token-ca-cert-hash=" + ca_pin(cluster));
  cluster.start_hub();
  auto pods = cluster.kubectl({"get", "pods", "-A", "-o", "name"});
  ASSERT_EQ(pods.exit_code, 0) << pods.err;
  EXPECT_NE(pods.out.find("pod/web-0"), std::string::npos);
  std::ifstream ca(cluster.dir() + "/root/pki/ca.crt");
  std::ifstream expected(cluster.dir() + "/pki/ca.crt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(ca), {}),
            std::string(std::istreambuf_iterator<char>(expected), {}));
  EXPECT_TRUE(std::filesystem::exists(cluster.dir() + "/root/bootstrap-hub.conf"));
}

TEST(CertificateJoinToken, AWrongPinStopsTheHubWithTheReason) {
  Cluster cluster(join_token_cluster());
  cluster.start_apiserver();
  auto created =
      cluster.kubectl_direct({"create", "-f", "-"}, std::chrono::seconds(20), kTokenSecret);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string wrong = "sha256:" + std::string(64, '0');
  auto run = run_command(
      {YURTHUB_BIN, "--server-addr=https://127.0.0.1:" + std::to_string(cluster.apiserver_port()),
       "--node-name=edge-node-1", "--join-token=" + std::string(kToken),
       "--discovery-token-ca-cert-hash=" + wrong, "--root-dir=" + cluster.dir() + "/root",
       "--enable-dummy-if=false", "--proxy-port=0", "--serve-port=0",
       "--disk-cache-path=" + cluster.dir() + "/cache"},
      std::chrono::seconds(30));
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("matches no --discovery-token-ca-cert-hash"), std::string::npos)
      << run.err;
  EXPECT_FALSE(std::filesystem::exists(cluster.dir() + "/root/yurthub.conf"));
}

TEST_F(CertificateBootstrap, TheHttpsPortServesWithACertificateFromItsCsr) {
  cluster_.add_hub_flag("--node-ip=192.0.2.7");
  cluster_.start_hub();
  auto pods =
      cluster_.pod_kubectl({"get", "pods", "-n", "default", "-o", "name"}, "pod-token-0123456789");
  ASSERT_EQ(pods.exit_code, 0) << pods.err << cluster_.hub().log();
  EXPECT_NE(pods.out.find("pod/web-0"), std::string::npos);
  // Without a token: 401 (kubectl, having no credentials, gives up and says EOF).
  const double refused_before =
      cluster_.metric(R"(node_yurthub_request_failures_total{reason="unauthorized"})");
  auto anonymous = cluster_.pod_kubectl({"get", "pods", "-n", "default"}, "");
  EXPECT_NE(anonymous.exit_code, 0);
  EXPECT_EQ(anonymous.out.find("web-0"), std::string::npos);
  EXPECT_GT(cluster_.metric(R"(node_yurthub_request_failures_total{reason="unauthorized"})"),
            refused_before);
  auto names =
      run_command({"/usr/bin/openssl", "x509", "-noout", "-subject", "-ext", "subjectAltName",
                   "-in", cluster_.dir() + "/root/pki/yurthub-server-current.pem"},
                  std::chrono::seconds(10));
  EXPECT_NE(names.out.find("CN = system:node:edge-node-1"), std::string::npos) << names.out;
  EXPECT_NE(names.out.find("DNS:kubernetes.default.svc.cluster.local"), std::string::npos);
  EXPECT_NE(names.out.find("IP Address:127.0.0.1"), std::string::npos);
  EXPECT_NE(names.out.find("IP Address:192.0.2.7"), std::string::npos);  // --node-ip
  // A pod that dials the kubernetes ClusterIP, which forwardkubesvctraffic has kube-proxy send to
  // the hub, verifies the hub's certificate under that IP (demo-objects.json: 10.96.0.1).
  EXPECT_NE(names.out.find("IP Address:10.96.0.1"), std::string::npos) << names.out;
  auto by_cluster_ip = cluster_.pod_kubectl(
      {"--tls-server-name=10.96.0.1", "get", "pods", "-n", "default", "-o", "name"},
      "pod-token-0123456789");
  EXPECT_EQ(by_cluster_ip.exit_code, 0) << by_cluster_ip.err;
}

// A serving certificate kept on disk is used at once at start, without asking the apiserver (a node
// restarting offline must not wait). When it does not name the kubernetes ClusterIP (here: the
// Service was re-created with another one), the hub renews it as soon as it runs.
TEST(CertificateServing, AStoredServingCertificateWithoutTheClusterIpIsRenewed) {
  ClusterOptions o = bootstrap_cluster();
  o.apiserver_flags.push_back("--csr-cert-lifetime-seconds=3600");  // no scheduled renewal here
  Cluster cluster_(o);
  start_for_bootstrap(cluster_);
  cluster_.start_hub();
  const std::string pem = cluster_.dir() + "/root/pki/yurthub-server-current.pem";
  const auto names = [&] {
    return run_command({"/usr/bin/openssl", "x509", "-noout", "-ext", "subjectAltName", "-in", pem},
                       std::chrono::seconds(10))
        .out;
  };
  ASSERT_NE(names().find("IP Address:10.96.0.1"), std::string::npos) << names();
  cluster_.hub().signal(SIGTERM);
  cluster_.hub().wait_exit(std::chrono::seconds(15));
  auto deleted = cluster_.kubectl_direct({"delete", "service", "kubernetes", "-n", "default"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  auto created = cluster_.kubectl_direct(
      {"create", "-f", "-"}, std::chrono::seconds(20),
      "apiVersion: v1\nkind: Service\nmetadata:\n  name: kubernetes\n  namespace: default\n"
      "spec:\n  clusterIP: 10.96.0.2\n  ports:\n  - name: https\n    port: 443\n"
      "    targetPort: 6443\n");
  ASSERT_EQ(created.exit_code, 0) << created.err;
  cluster_.start_hub();
  ASSERT_TRUE(eventually([&] { return names().find("IP Address:10.96.0.2") != std::string::npos; },
                         std::chrono::seconds(20)))
      << names() << cluster_.hub().log();
  auto pods = cluster_.pod_kubectl(
      {"--tls-server-name=10.96.0.2", "get", "pods", "-n", "default", "-o", "name"},
      "pod-token-0123456789");
  EXPECT_EQ(pods.exit_code, 0) << pods.err;
}

TEST_F(CertificateBootstrap, RenewalThatFailedWhileTheCloudWasAwaySucceedsWhenItReturns) {
  cluster_.start_hub();
  const std::string success = R"(node_yurthub_client_certificate_renewals_total{result="success"})";
  const std::string failure = R"(node_yurthub_client_certificate_renewals_total{result="failure"})";
  cluster_.stop_apiserver();
  ASSERT_TRUE(eventually([&] { return cluster_.metric(failure) >= 1; }, std::chrono::seconds(30)))
      << cluster_.hub().log();
  const double succeeded_offline = cluster_.metric(success);
  // The fake keeps nothing across a restart: the token Secret comes back with the cloud.
  cluster_.start_apiserver();
  auto created =
      cluster_.kubectl_direct({"create", "-f", "-"}, std::chrono::seconds(20), kTokenSecret);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  ASSERT_TRUE(eventually([&] { return cluster_.metric(success) > succeeded_offline; },
                         std::chrono::seconds(90)))
      << cluster_.hub().log();
  ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(true, std::chrono::seconds(10)));
  auto pods = cluster_.kubectl({"get", "pods", "-n", "default", "-o", "name"});
  EXPECT_EQ(pods.exit_code, 0) << pods.err;
}

// Issue 30: a token posted to /v1/token is adopted only once cluster discovery with it succeeds.
// One that cannot be (posted offline, unknown to the cluster) never replaces --bootstrap-file:
// when the cloud returns, the certificate that expired offline is renewed with the file's token.
// It once won for good, and the hub stayed cut off (503) until a restart.
TEST_F(CertificateBootstrap, ABadPostedTokenLeavesTheBootstrapFileInForce) {
  cluster_.start_hub();
  const std::string success = R"(node_yurthub_client_certificate_renewals_total{result="success"})";
  const std::string failure = R"(node_yurthub_client_certificate_renewals_total{result="failure"})";
  cluster_.stop_apiserver();
  ASSERT_TRUE(eventually([&] { return cluster_.metric(failure) >= 1; }, std::chrono::seconds(30)))
      << cluster_.hub().log();
  // The certificate expires offline: only bootstrap credentials can get another.
  ASSERT_TRUE(wait_certificate_expired(cluster_));
  const std::string answer = post_token(cluster_, R"({"jointoken":"zzzzzz.0123456789zzzzzz"})");
  ASSERT_NE(answer.find("HTTP/1.1 200"), std::string::npos) << answer;
  EXPECT_NE(post_token(cluster_, R"({"jointoken":"yyyyyy.0123456789yyyyyy"})").find("HTTP/1.1 429"),
            std::string::npos)
      << "posts are rate-limited";
  const double succeeded_offline = cluster_.metric(success);
  cluster_.start_apiserver();
  auto created =
      cluster_.kubectl_direct({"create", "-f", "-"}, std::chrono::seconds(20), kTokenSecret);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  ASSERT_TRUE(eventually([&] { return cluster_.metric(success) > succeeded_offline; },
                         std::chrono::seconds(90)))
      << cluster_.hub().log();
  ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(true, std::chrono::seconds(10)));
  auto pods = cluster_.kubectl({"get", "pods", "-n", "default", "-o", "name"});
  EXPECT_EQ(pods.exit_code, 0) << pods.err;
  EXPECT_NE(cluster_.hub().log().find("the posted join token cannot be used"), std::string::npos);
}

// The node was offline until both its certificate and its bootstrap token were dead (the token
// Secret is gone when the fake apiserver comes back). Renewal fails until an operator posts a new
// join token to /v1/token; then the hub discovers the cluster with it, gets a new certificate and
// serves again, without a restart.
TEST(CertificateRescue, AJoinTokenPostedAfterCertificateAndTokenExpiredRecoversTheHub) {
  ClusterOptions o = bootstrap_cluster();
  o.apiserver_flags.push_back("--csr-cert-lifetime-seconds=8");  // the last one wins
  Cluster cluster(o);
  start_for_bootstrap(cluster);
  cluster.add_hub_flag("--discovery-token-ca-cert-hash=" + ca_pin(cluster));
  cluster.start_hub();
  const std::string success = R"(node_yurthub_client_certificate_renewals_total{result="success"})";
  const std::string failure = R"(node_yurthub_client_certificate_renewals_total{result="failure"})";
  cluster.stop_apiserver();
  ASSERT_TRUE(wait_certificate_expired(cluster));
  cluster.start_apiserver();  // without the first token's Secret
  const double failed_before = cluster.metric(failure);
  ASSERT_TRUE(
      eventually([&] { return cluster.metric(failure) > failed_before; }, std::chrono::seconds(70)))
      << cluster.hub().log();
  EXPECT_NE(cluster.kubectl({"get", "pods", "-n", "default"}).exit_code, 0);

  const std::string second_secret =
      std::regex_replace(std::string(kTokenSecret), std::regex("abcdef"), "ghijkl");
  auto created =
      cluster.kubectl_direct({"create", "-f", "-"}, std::chrono::seconds(20), second_secret);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const double succeeded_before = cluster.metric(success);
  const std::string answer = post_token(cluster, R"({"jointoken":"ghijkl.0123456789ghijkl"})");
  ASSERT_NE(answer.find("HTTP/1.1 200"), std::string::npos) << answer;
  ASSERT_TRUE(eventually([&] { return cluster.metric(success) > succeeded_before; },
                         std::chrono::seconds(30)))
      << cluster.hub().log();
  EXPECT_GT(cluster.metric(kExpiry), unix_now());
  ASSERT_TRUE(cluster.wait_hub_sees_apiserver(true, std::chrono::seconds(10)));
  auto pods = cluster.kubectl({"get", "pods", "-n", "default", "-o", "name"});
  EXPECT_EQ(pods.exit_code, 0) << pods.err;
  EXPECT_NE(read_text(cluster.dir() + "/root/bootstrap-hub.conf").find("ghijkl."),
            std::string::npos);
}

// A node moved to another cluster: the root dir holds the first cluster's CA and certificate, which
// the second refuses. As YurtHub does, the hub forgets them and bootstraps with the new cluster.
TEST_F(CertificateBootstrap, ANodeMovedToAnotherClusterForgetsTheFirstClustersCertificates) {
  cluster_.start_hub();
  cluster_.hub().signal(SIGTERM);
  cluster_.hub().wait_exit(std::chrono::seconds(15));
  const std::string root = cluster_.dir() + "/root";
  ASSERT_EQ(read_text(root + "/pki/ca.crt"), read_text(cluster_.dir() + "/pki/ca.crt"));

  ClusterOptions o = bootstrap_cluster();
  o.hub_flags = {"--bootstrap-file={dir}/bootstrap.conf", "--root-dir=" + root};
  Cluster second(o);  // its own CA
  start_for_bootstrap(second);
  second.start_hub();
  EXPECT_EQ(read_text(root + "/pki/ca.crt"), read_text(second.dir() + "/pki/ca.crt"));
  auto pods = second.kubectl({"get", "pods", "-n", "default", "-o", "name"});
  EXPECT_EQ(pods.exit_code, 0) << pods.err << second.hub().log();
  EXPECT_NE(second.hub().log().find("forgetting its certificates"), std::string::npos);
}

TEST_F(CertificateBootstrap, JoinTokenEndpointTakesOnlyATokenOfTheRightForm) {
  cluster_.start_hub();
  const auto post = [&](const std::string& body) { return post_token(cluster_, body); };
  EXPECT_NE(post(R"({"jointoken":"not-a-token"})").find("400"), std::string::npos);
  EXPECT_NE(post(R"({"other":"x"})").find("400"), std::string::npos);
  const std::string ok = post(R"({"jointoken":"abcdef.0123456789abcdef"})");
  EXPECT_NE(ok.find("HTTP/1.1 200"), std::string::npos) << ok;
  EXPECT_NE(ok.find("update bootstrap token successfully"), std::string::npos);
}

}  // namespace
}  // namespace yurthub::test
