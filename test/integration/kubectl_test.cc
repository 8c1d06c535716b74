// What an operator or kubelet does through the hub, driven with the real kubectl against the
// real yurthub binary in front of the fake apiserver: get, list, watch, apply, patch, delete,
// --raw, identity (hub certificate vs the caller's bearer token) and exec through the tunnel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/integration/cluster.h"

namespace yurthub::test {
namespace {

using testing::HasSubstr;
using testing::Not;

const char kConfigMap[] = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: through-hub
  namespace: default
data:
  greeting: hello
)";

const char kPod[] = R"(apiVersion: v1
kind: Pod
metadata:
  name: shell
  namespace: default
  labels:
    app: shell
spec:
  nodeName: edge-node-1
  containers:
  - name: main
    image: busybox
)";

class KubectlThroughHub : public testing::Test {
 protected:
  void SetUp() override {
    cluster_.start_apiserver();
    cluster_.start_hub();
  }
  Cluster cluster_;
};

TEST_F(KubectlThroughHub, ListsAndGetsObjects) {
  auto nodes = cluster_.kubectl({"get", "nodes", "-o", "name"});
  ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
  EXPECT_EQ(nodes.out, "node/edge-node-1\nnode/edge-node-2\n");

  auto service = cluster_.kubectl({"get", "service", "web", "-n", "default", "-o",
                                   "jsonpath={.metadata.annotations.openyurt\\.io/topologyKeys}"});
  ASSERT_EQ(service.exit_code, 0) << service.err;
  EXPECT_EQ(service.out, "openyurt.io/nodepool");

  auto missing = cluster_.kubectl({"get", "configmap", "nope", "-n", "default"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_THAT(missing.err, HasSubstr("\"nope\" not found"));
}

TEST_F(KubectlThroughHub, RawRequestsPassThrough) {
  auto version = cluster_.kubectl({"get", "--raw", "/version"});
  ASSERT_EQ(version.exit_code, 0) << version.err;
  EXPECT_THAT(version.out, HasSubstr("\"gitVersion\""));

  auto endpoints = cluster_.kubectl({"get", "--raw", "/api/v1/namespaces/default/endpoints/web"});
  ASSERT_EQ(endpoints.exit_code, 0) << endpoints.err;
  EXPECT_THAT(endpoints.out, HasSubstr("\"kind\":\"Endpoints\""));
  EXPECT_THAT(endpoints.out, HasSubstr("192.0.2.11"));
}

TEST_F(KubectlThroughHub, ApplyPatchDeleteReachTheApiserver) {
  auto applied = cluster_.kubectl({"apply", "-f", "-"}, std::chrono::seconds(30), kConfigMap);
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_THAT(applied.out, HasSubstr("configmap/through-hub created"));
  auto stored = cluster_.kubectl_direct(
      {"get", "configmap", "through-hub", "-n", "default", "-o", "jsonpath={.data.greeting}"});
  EXPECT_EQ(stored.out, "hello");

  auto merged = cluster_.kubectl({"patch", "configmap", "through-hub", "-n", "default", "--type",
                                  "merge", "-p", R"({"data":{"greeting":"bonjour"}})"});
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  auto json_patched =
      cluster_.kubectl({"patch", "configmap", "through-hub", "-n", "default", "--type", "json",
                        "-p", R"([{"op":"add","path":"/data/extra","value":"1"}])"});
  ASSERT_EQ(json_patched.exit_code, 0) << json_patched.err;
  stored = cluster_.kubectl_direct({"get", "configmap", "through-hub", "-n", "default", "-o",
                                    "jsonpath={.data.greeting}/{.data.extra}"});
  EXPECT_EQ(stored.out, "bonjour/1");

  auto deleted = cluster_.kubectl({"delete", "configmap", "through-hub", "-n", "default"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_THAT(deleted.out, HasSubstr("deleted"));
  auto gone = cluster_.kubectl_direct({"get", "configmap", "through-hub", "-n", "default"});
  EXPECT_NE(gone.exit_code, 0);
  EXPECT_THAT(gone.err, HasSubstr("not found"));
}

TEST_F(KubectlThroughHub, WatchDeliversEventsAsTheyHappen) {
  auto watch = Process::start(
      cluster_.kubectl_argv({"get", "configmaps", "-n", "default", "-w", "--output-watch-events",
                             "-o", "custom-columns=EVENT:.type,NAME:.object.metadata.name"}),
      cluster_.dir() + "/watch.log");
  ASSERT_TRUE(watch);
  for (const char* name : {"first", "second"}) {
    // From YAML, as apply does: kubectl's create generators send protobuf, which the fake lacks.
    auto created =
        cluster_.kubectl_direct({"create", "-f", "-"}, std::chrono::seconds(30),
                                std::string("apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                                            "  name: ") +
                                    name + "\n  namespace: default\n");
    ASSERT_EQ(created.exit_code, 0) << created.err;
    // Each event arrives on its own while the watch stays open: "second" is created only after
    // "first" was seen.
    EXPECT_TRUE(watch->wait_for_log(std::string("ADDED +") + name, std::chrono::seconds(10)))
        << watch->log();
  }
  auto deleted = cluster_.kubectl_direct({"delete", "configmap", "first", "-n", "default"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_TRUE(watch->wait_for_log("DELETED +first", std::chrono::seconds(10))) << watch->log();
  EXPECT_TRUE(watch->running());
}

TEST_F(KubectlThroughHub, RequestsWithoutTokenUseTheHubIdentity) {
  auto whoami = cluster_.kubectl({"auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"});
  ASSERT_EQ(whoami.exit_code, 0) << whoami.err;
  EXPECT_EQ(whoami.out, "system:node:edge-node-1");
}

// kubectl never sends a token over plain http://, but other clients on the node do (scripts,
// non-Go clients): the token must reach the apiserver, not be replaced by the hub's identity.
std::string self_subject_review(int port, const std::string& token) {
  const std::string body =
      R"({"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","metadata":{}})";
  return raw_http(port,
                  "POST /apis/authentication.k8s.io/v1/selfsubjectreviews HTTP/1.1\r\n"
                  "Host: hub\r\nUser-Agent: curl/8.0\r\nContent-Type: application/json\r\n"
                  "Authorization: Bearer " +
                      token + "\r\nContent-Length: " + std::to_string(body.size()) +
                      "\r\nConnection: close\r\n\r\n" + body);
}

TEST_F(KubectlThroughHub, BearerTokenReachesTheApiserverAsTheCaller) {
  const std::string review = self_subject_review(cluster_.proxy_port(), "pod-token-0123456789");
  EXPECT_THAT(review, testing::StartsWith("HTTP/1.1 201"));
  EXPECT_THAT(review, HasSubstr(R"("username":"system:serviceaccount:default:web")"));

  // An unknown token is rejected by the apiserver; the hub does not substitute its own identity.
  const std::string rejected = self_subject_review(cluster_.proxy_port(), "no-such-token");
  EXPECT_THAT(rejected, testing::StartsWith("HTTP/1.1 401"));
  EXPECT_THAT(rejected, HasSubstr(R"("reason":"Unauthorized")"));
  EXPECT_THAT(rejected, Not(HasSubstr("system:node")));
}

TEST_F(KubectlThroughHub, ExecIsTunnelledBothWays) {
  auto created = cluster_.kubectl_direct({"apply", "-f", "-"}, std::chrono::seconds(30), kPod);
  ASSERT_EQ(created.exit_code, 0) << created.err;

  auto echoed = cluster_.kubectl({"exec", "shell", "-n", "default", "--", "echo", "hello", "hub"});
  ASSERT_EQ(echoed.exit_code, 0) << echoed.err;
  EXPECT_EQ(echoed.out, "hello hub\n");

  // stdin travels client -> apiserver and comes back: both directions of the tunnel.
  auto cat = cluster_.kubectl({"exec", "-i", "shell", "-n", "default", "--", "cat"},
                              std::chrono::seconds(30), "ping\npong\n");
  ASSERT_EQ(cat.exit_code, 0) << cat.err;
  EXPECT_EQ(cat.out, "ping\npong\n");

  auto failing = cluster_.kubectl({"exec", "shell", "-n", "default", "--", "no-such-command"});
  EXPECT_NE(failing.exit_code, 0);
}

class KubectlThroughHttpsPort : public testing::Test {
 protected:
  void SetUp() override {
    cluster_.start_apiserver();
    cluster_.start_hub();
  }
  std::vector<std::string> secure_kubectl(const std::vector<std::string>& args,
                                          const std::string& token) {
    std::vector<std::string> argv = {
        KUBECTL_BIN, "--kubeconfig=" + cluster_.dir() + "/empty.kubeconfig",
        "--server=https://127.0.0.1:" + std::to_string(cluster_.secure_port()),
        "--certificate-authority=" + cluster_.dir() + "/pki/ca.crt",
        "--cache-dir=" + cluster_.dir() + "/kubectl-secure-cache"};
    if (!token.empty()) argv.push_back("--token=" + token);
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  static ClusterOptions https_options() {
    ClusterOptions options;
    options.hub_https = true;
    return options;
  }
  Cluster cluster_{https_options()};
};

TEST_F(KubectlThroughHttpsPort, PodTokenIsForwardedAsTheCaller) {
  auto whoami =
      run_command(secure_kubectl({"auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"},
                                 "pod-token-0123456789"),
                  std::chrono::seconds(30));
  ASSERT_EQ(whoami.exit_code, 0) << whoami.err;
  EXPECT_EQ(whoami.out, "system:serviceaccount:default:web");
}

TEST_F(KubectlThroughHttpsPort, RequestsWithoutTokenAreRefused) {
  // The hub answers 401; kubectl, having no credentials, gives up (it would prompt on a tty).
  auto refused = run_command(secure_kubectl({"get", "nodes"}, ""), std::chrono::seconds(30));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.out, Not(HasSubstr("edge-node-1")));
  EXPECT_GE(cluster_.metric(R"(node_yurthub_request_failures_total{reason="unauthorized"})"), 1);
}

}  // namespace
}  // namespace yurthub::test
