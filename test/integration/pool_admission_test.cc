// pool-admission (docs/pool-admission.md) as a real process: its webhook driven over HTTPS the
// way kube-apiserver calls a webhook (a POST of an AdmissionReview v1 to the configured path with
// `?timeout=10s`, the serving certificate verified against the caBundle), and its node labeller
// against the fake apiserver's NodePools and Nodes: a pool created, a node moved between pools, a
// pool's hostNetwork flipped, and a restart that finds the cluster changed while it was down.
#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "base/base64.h"
#include "base/json_member.h"
#include "base/json_parse.h"
#include "kube/json_patch.h"
#include "test/base/json_test_support.h"
#include "test/integration/cluster.h"

namespace yurthub::test {
namespace {

using ::yurthub::test_support::parse_json;

constexpr auto kWait = std::chrono::seconds(20);

class PoolAdmission {
 public:
  explicit PoolAdmission(Cluster& cluster) : cluster_(cluster) {
    cluster_.write_kubeconfig(cluster_.dir() + "/labeller.kubeconfig",
                              {{"token", "admin-token-0123456789"}});
  }
  void start() {
    const std::string pki = cluster_.dir() + "/pki/";
    process_ = Process::start(
        {POOL_ADMISSION_BIN, "--kubeconfig=" + cluster_.dir() + "/labeller.kubeconfig",
         "--tls-cert-file=" + pki + "hub-server.crt",
         "--tls-private-key-file=" + pki + "hub-server.key", "--bind-address=127.0.0.1",
         "--secure-port=0", "--labeller-username=system:serviceaccount:kube-system:pool-admission"},
        cluster_.dir() + "/pool-admission-" + std::to_string(++starts_) + ".log");
    ASSERT_TRUE(process_);
    auto port = process_->wait_for_log(R"(webhook listening on 127\.0\.0\.1:(\d+))", kWait);
    ASSERT_TRUE(port) << process_->log();
    port_ = std::stoi(*port);
  }
  void kill() {
    process_->signal(SIGKILL);
    process_->wait_exit(std::chrono::seconds(10));
  }
  Process& process() { return *process_; }
  int port() const { return port_; }

  // POSTs `body` as kube-apiserver does; returns the HTTP status and fills `reply`.
  int post(const std::string& path, const std::string& body, std::string* reply,
           const std::string& content_type = "application/json") {
    const std::string file = cluster_.dir() + "/review.json";
    std::ofstream(file) << body;
    auto result =
        run_command({"/usr/bin/curl", "-sS", "--cacert", cluster_.dir() + "/pki/ca.crt", "-o", "-",
                     "-w", "\n%{http_code}", "-H", "Content-Type: " + content_type, "-H",
                     "Accept: application/json", "--data-binary", "@" + file,
                     "https://127.0.0.1:" + std::to_string(port_) + path + "?timeout=10s"},
                    std::chrono::seconds(30));
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const auto newline = result.out.rfind('\n');
    if (newline == std::string::npos) return 0;
    *reply = result.out.substr(0, newline);
    return std::stoi(result.out.substr(newline + 1));
  }

 private:
  Cluster& cluster_;
  std::unique_ptr<Process> process_;
  int port_ = 0;
  int starts_ = 0;
};

std::string testdata(const std::string& name) {
  return read_file(std::string(YURTHUB_TESTDATA_DIR) + "/admission/" + name + ".review.json");
}

TEST(PoolAdmissionWebhook, AnswersAdmissionReviewsOverHttpsAsKubeApiserverReadsThem) {
  Cluster cluster(demo_cluster());
  cluster.start_apiserver();
  PoolAdmission admission(cluster);
  admission.start();

  // The pod with two node-selector terms: the patch kube-apiserver applies puts the requirement
  // in both.
  const std::string review = testdata("pod-several-terms");
  std::string reply;
  ASSERT_EQ(admission.post("/mutate-pods", review, &reply), 200) << reply;
  rapidjson::Document answer = parse_json(reply);
  const rapidjson::Value& response = answer["response"];
  EXPECT_EQ(base::string_member(response, "uid"), "a1b2c3d4-0000-4000-8000-000000000003");
  EXPECT_TRUE(response["allowed"].GetBool());
  ASSERT_EQ(base::string_member(response, "patchType"), "JSONPatch");
  auto patch_text = base::decode_base64(base::string_member(response, "patch"));
  ASSERT_TRUE(patch_text.ok());
  rapidjson::Document pod;
  pod.CopyFrom(parse_json(review)["request"]["object"], pod.GetAllocator());
  ASSERT_TRUE(kube::apply_json_patch(pod, parse_json(*patch_text)).ok()) << *patch_text;
  const auto& terms = pod["spec"]["affinity"]["nodeAffinity"]
                         ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  ASSERT_EQ(terms.Size(), 2u);
  for (const auto& term : terms.GetArray()) {
    const auto& last = term["matchExpressions"][term["matchExpressions"].Size() - 1];
    EXPECT_EQ(base::to_json(last),
              R"({"key":"nodepool.openyurt.io/hostnetwork","operator":"NotIn","values":["true"]})");
  }

  // A hostNetwork pod is admitted unchanged; a hand change of the node label is refused.
  ASSERT_EQ(admission.post("/mutate-pods", testdata("pod-host-network"), &reply), 200);
  EXPECT_FALSE(parse_json(reply)["response"].HasMember("patch")) << reply;
  ASSERT_EQ(admission.post("/validate-nodes", testdata("node-label-changed"), &reply), 200);
  rapidjson::Document refused = parse_json(reply);
  EXPECT_FALSE(refused["response"]["allowed"].GetBool());
  EXPECT_EQ(refused["response"]["status"]["code"].GetInt(), 403);

  // Bad input: a Status, and the webhook still answers afterwards.
  EXPECT_EQ(admission.post("/mutate-pods", "{\"kind\":", &reply), 400);
  EXPECT_EQ(base::string_member(parse_json(reply), "kind"), "Status");
  EXPECT_EQ(admission.post("/mutate-pods", review, &reply, "text/plain"), 415);
  EXPECT_EQ(admission.post("/mutate-pods", std::string(9u << 20, ' '), &reply), 413);
  EXPECT_EQ(admission.post("/nope", review, &reply), 404);
  EXPECT_EQ(admission.post("/mutate-pods", review, &reply), 200);
  EXPECT_TRUE(admission.process().running());

  // The probes' path; another method than POST.
  auto health = run_command(
      {"/usr/bin/curl", "-sS", "--cacert", cluster.dir() + "/pki/ca.crt", "-w", " %{http_code}",
       "https://127.0.0.1:" + std::to_string(admission.port()) + "/healthz"},
      std::chrono::seconds(30));
  EXPECT_EQ(health.out, "ok 200") << health.err;
  auto get = run_command(
      {"/usr/bin/curl", "-sS", "--cacert", cluster.dir() + "/pki/ca.crt", "-o", "/dev/null", "-w",
       "%{http_code}", "https://127.0.0.1:" + std::to_string(admission.port()) + "/mutate-pods"},
      std::chrono::seconds(30));
  EXPECT_EQ(get.out, "405") << get.err;

  // kube-apiserver keeps its connection to a webhook open: the second review reuses the first's.
  const std::string url = "https://127.0.0.1:" + std::to_string(admission.port());
  auto both = run_command(
      {"/usr/bin/curl", "-sS", "--cacert", cluster.dir() + "/pki/ca.crt", "-o", "/dev/null", "-o",
       "/dev/null", "-w", "%{http_code} %{num_connects}\n", "-H", "Content-Type: application/json",
       "--data-binary", "@" + cluster.dir() + "/review.json", url + "/mutate-pods?timeout=10s",
       url + "/validate-nodes?timeout=10s"},
      std::chrono::seconds(30));
  EXPECT_EQ(both.out, "200 1\n200 0\n") << both.err;
}

// The label of every node, "-" when absent.
std::string host_network_labels(Cluster& cluster) {
  auto got = cluster.kubectl_direct(
      {"get", "nodes", "-o",
       R"(jsonpath={range .items[*]}{.metadata.name}={.metadata.labels.nodepool\.openyurt\.io/hostnetwork} {end})"});
  EXPECT_EQ(got.exit_code, 0) << got.err;
  return got.out;
}

bool labels_become(Cluster& cluster, const std::string& expected) {
  std::string last;
  const bool reached = eventually(
      [&] {
        last = host_network_labels(cluster);
        return last == expected;
      },
      kWait);
  EXPECT_TRUE(reached) << "labels: " << last << "\nexpected: " << expected;
  return reached;
}

std::string resource_version(Cluster& cluster, const std::string& node) {
  return cluster.kubectl_direct({"get", "node", node, "-o", "jsonpath={.metadata.resourceVersion}"})
      .out;
}

void apply(Cluster& cluster, const std::string& manifest) {
  auto applied = cluster.kubectl_direct({"apply", "-f", "-"}, std::chrono::seconds(30), manifest);
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
}

TEST(PoolAdmissionLabeller, FollowsPoolsAndNodesAndResyncsAfterARestart) {
  Cluster cluster(demo_cluster());  // edge-node-1 in pool-a, edge-node-2 in pool-b, no hostNetwork
  cluster.start_apiserver();
  PoolAdmission admission(cluster);
  admission.start();
  ASSERT_TRUE(labels_become(cluster, "edge-node-1=false edge-node-2=false "));

  // A hostNetwork pool is created, and a new node joins it.
  apply(cluster, R"({"apiVersion":"apps.openyurt.io/v1beta2","kind":"NodePool",)"
                 R"("metadata":{"name":"pool-host"},"spec":{"type":"Edge","hostNetwork":true}})");
  apply(cluster, R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"edge-node-3",)"
                 R"("labels":{"apps.openyurt.io/nodepool":"pool-host"}}})");
  ASSERT_TRUE(labels_become(cluster, "edge-node-1=false edge-node-2=false edge-node-3=true "));

  // A node moves into it.
  ASSERT_EQ(cluster
                .kubectl_direct({"label", "node", "edge-node-2",
                                 "apps.openyurt.io/nodepool=pool-host", "--overwrite"})
                .exit_code,
            0);
  ASSERT_TRUE(labels_become(cluster, "edge-node-1=false edge-node-2=true edge-node-3=true "));

  // The pool's hostNetwork is turned off: both of its nodes follow.
  ASSERT_EQ(cluster
                .kubectl_direct({"patch", "nodepools.apps.openyurt.io", "pool-host", "--type=merge",
                                 "-p", R"({"spec":{"hostNetwork":false}})"})
                .exit_code,
            0);
  ASSERT_TRUE(labels_become(cluster, "edge-node-1=false edge-node-2=false edge-node-3=false "));

  // While pool-admission is down, pool-a turns hostNetwork and someone edits edge-node-3's label
  // (the fake apiserver calls no webhook). After the restart, the labeller's first lists bring
  // both back, and the node that was right is not written again.
  admission.kill();
  ASSERT_EQ(cluster
                .kubectl_direct({"patch", "nodepools.apps.openyurt.io", "pool-a", "--type=merge",
                                 "-p", R"({"spec":{"hostNetwork":true}})"})
                .exit_code,
            0);
  ASSERT_EQ(cluster
                .kubectl_direct({"label", "node", "edge-node-3",
                                 "nodepool.openyurt.io/hostnetwork=true", "--overwrite"})
                .exit_code,
            0);
  const std::string untouched = resource_version(cluster, "edge-node-2");
  admission.start();
  ASSERT_TRUE(labels_become(cluster, "edge-node-1=true edge-node-2=false edge-node-3=false "));
  EXPECT_EQ(resource_version(cluster, "edge-node-2"), untouched);
  const std::string log = admission.process().log();
  EXPECT_EQ(log.find("node edge-node-2:"), std::string::npos) << log;
}

}  // namespace
}  // namespace yurthub::test
