// A pool's leader hub with the real binaries: three hubs of pool-a (edge-node-1 the leader named
// by ConfigMap leader-hub-pool-a, edge-node-2 and -3 its followers) and one of pool-b against one
// fake apiserver; each hub on its own loopback address (127.0.0.1N, the --node-ip its serving
// certificate names) and the same --multiplexer-port. The followers feed their shared caches
// from the leader over mutual TLS, so the cloud holds the leader's watch only; each follower
// still filters for its own clients; a follower goes back to the cloud when the leader dies,
// without ending its clients' watches; the multiplexer port refuses whoever is not a node of the
// pool, and anything but the pool-scope lists and watches.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <rapidjson/document.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <map>
#include <string>

#include "test/integration/cluster.h"
#include "test/integration/http_client.h"
#include "test/integration/pool_events.h"
#include "test/integration/reflector_client.h"

namespace yurthub::test {
namespace {

constexpr const char* kKubeProxy = "kube-proxy/v1.32.4 (linux/amd64) kubernetes/abc1234";
const std::string kSlices = "/apis/discovery.k8s.io/v1/endpointslices";
constexpr const char* kSliceResource = "discovery.k8s.io/v1/endpointslices";

// Each node's loopback address: its --node-ip, named by its serving certificate.
std::string ip_of(int node) { return "127.0.0.1" + std::to_string(node); }
std::string node(int n) { return "edge-node-" + std::to_string(n); }

// A port free on 127.0.0.1 now: every hub's --multiplexer-port (each binds its own address).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

class LeaderHub : public testing::Test {
 protected:
  LeaderHub() : port_(free_port()), cluster_(options(port_)) {}
  // The leader reaches the cloud through a TcpRelay (cut by a test), its followers directly.
  static ClusterOptions options(int port) {
    ClusterOptions o;
    o.seeds = {"fake_apiserver/topology-objects.json"};
    o.hub_flags = hub_flags(1, port);
    o.through_relay = true;
    return o;
  }
  static std::vector<std::string> hub_flags(int n, int port) {
    return {"--node-ip=" + ip_of(n), "--multiplexer-port=" + std::to_string(port),
            "--tls-cert-file={dir}/pki/" + node(n) + "/hub-server.crt",
            "--tls-private-key-file={dir}/pki/" + node(n) + "/hub-server.key"};
  }
  void SetUp() override {
    ASSERT_GT(port_, 0);
    cluster_.start_apiserver();
    for (int n = 1; n <= 4; ++n) cluster_.make_node_pki(node(n), ip_of(n));
    // pool-a grows to edge-node-1..3; the leader is edge-node-1 (yurt-manager's ConfigMap).
    kubectl_direct({"label", "node", node(3), "apps.openyurt.io/nodepool=pool-a", "--overwrite"});
    kubectl_direct({"patch", "nodepools.apps.openyurt.io", "pool-a", "--subresource=status",
                    "--type=merge", "-p",
                    R"({"status":{"nodes":["edge-node-1","edge-node-2","edge-node-3"]}})"});
    apply(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: leader-hub-pool-a\n"
        "  namespace: kube-system\n  labels:\n    openyurt.io/configmap-name: leader-hub-pool-a\n"
        "data:\n  pool-scoped-metadata: \"/v1/services,discovery.k8s.io/v1/endpointslices\"\n"
        "  enable-leader-election: \"true\"\n  interconnectivity: \"true\"\n"
        "  leaders: \"edge-node-1/" +
        ip_of(1) + "\"\n");
    cluster_.start_hub();
    for (int n : {2, 3}) {
      auto flags = hub_flags(n, port_);
      flags.push_back("--server-addr=https://127.0.0.1:" +
                      std::to_string(cluster_.apiserver_port()));
      followers_.push_back(cluster_.start_peer_hub(node(n), flags));
    }
    // Both followers feed both resources from the leader.
    for (int i = 0; i < 2; ++i) {
      for (const char* r : {kSliceResource, "/v1/services"}) {
        ASSERT_TRUE(wait_follower_source(i, r, "leader", std::chrono::seconds(20)));
      }
    }
  }
  void kubectl_direct(const std::vector<std::string>& args) {
    auto r = cluster_.kubectl_direct(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  void apply(const std::string& yaml) {
    auto r = cluster_.kubectl_direct({"apply", "-f", "-"}, std::chrono::seconds(30), yaml);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // The shared cache's own upstream watch of `resource`, served from `server`.
  static std::string target(const std::string& node, const std::string& resource,
                            const std::string& server) {
    return R"(node_yurthub_target_for_multiplexer_requests_collector{verb="watch",resource=")" +
           resource + R"(",subresources="",client="multiplexer-proxy-)" + node + R"(",server=")" +
           server + R"("})";
  }
  // Waits until follower `i`'s shared cache watches `resource` from `server` ("leader" or
  // "cloud"); a failure carries the follower's log.
  testing::AssertionResult wait_follower_source(int i, const std::string& resource,
                                                const std::string& server,
                                                std::chrono::seconds timeout) {
    if (eventually([&] { return followers_[i].metric(target(node(i + 2), resource, server)) == 1; },
                   timeout)) {
      return testing::AssertionSuccess();
    }
    return testing::AssertionFailure()
           << node(i + 2) << " does not watch " << resource << " from the " << server << "\n"
           << followers_[i].process->log();
  }
  // Changes EndpointSlice by-pool-x1 at the apiserver and expects follower edge-node-2's client
  // `watch` to get the MODIFIED event, its watch not ended.
  void expect_next_change(WatchStream& watch) {
    kubectl_direct({"label", "endpointslice", "-n", "default", "by-pool-x1", "touched=yes"});
    EXPECT_TRUE(eventually([&] { return last_events(watch)["by-pool-x1"].first == "MODIFIED"; },
                           std::chrono::seconds(10)))
        << followers_[0].process->log();
    EXPECT_FALSE(watch.ended());
  }
  // EndpointSlice watches open at the fake apiserver for `user`: started minus ended.
  int open_slice_watches(const std::string& user) {
    const int started = cluster_.apiserver_requests(
        R"(\] GET /apis/discovery\.k8s\.io/v1/endpointslices\?\S*watch=\S* user=)" + user + " 200");
    const int ended =
        cluster_.apiserver_requests(R"(watch \S*endpointslices\S* ended: .* user=)" + user + "$");
    return started - ended;
  }
  // kubectl to a hub's multiplexer port as `who` (a node's PKI dir, "" for no certificate).
  CommandResult kubectl_multiplexer(int n, const std::string& who,
                                    const std::vector<std::string>& args) {
    const std::string pki = cluster_.dir() + "/pki/";
    std::vector<std::string> argv = {KUBECTL_BIN,
                                     "--kubeconfig=" + cluster_.dir() + "/empty.kubeconfig",
                                     "--server=https://" + ip_of(n) + ":" + std::to_string(port_),
                                     "--certificate-authority=" + pki + "ca.crt",
                                     "--cache-dir=" + cluster_.dir() + "/kubectl-mux-cache",
                                     "--request-timeout=10s"};
    if (!who.empty()) {  // a PKI file name: "edge-node-2/hub-client", "admin"
      argv.push_back("--client-certificate=" + pki + who + ".crt");
      argv.push_back("--client-key=" + pki + who + ".key");
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, std::chrono::seconds(20));
  }
  std::string follower_list(int i) {
    auto r = http_request(followers_[i].proxy_port, "GET", kSlices, {{"User-Agent", kKubeProxy}});
    EXPECT_EQ(r.status, 200) << r.body;
    return r.body;
  }

  int port_;
  Cluster cluster_;
  std::vector<PeerHub> followers_;
};

TEST_F(LeaderHub, ThreeHubsOfAPoolHoldTheLeadersWatchOnly) {
  // The cloud serves the leader's watch; the followers' went to the leader (a follower may have
  // begun at the cloud before it heard of its leader: that watch ends when it switches).
  EXPECT_EQ(open_slice_watches("system:node:edge-node-1"), 1) << cluster_.apiserver().log();
  for (int n : {2, 3}) {
    EXPECT_TRUE(eventually([&] { return open_slice_watches("system:node:" + node(n)) == 0; },
                           std::chrono::seconds(5)))
        << cluster_.apiserver().log();
  }

  // A client of each follower, filtered by its own hub: kube-proxy sees pool-a's endpoints.
  WatchStream w2(followers_[0].proxy_port,
                 kSlices + "?watch=true&resourceVersion=" + list_rv(follower_list(0)), kKubeProxy);
  WatchStream w3(followers_[1].proxy_port,
                 kSlices + "?watch=true&resourceVersion=" + list_rv(follower_list(1)), kKubeProxy);
  for (auto* w : {&w2, &w3}) ASSERT_TRUE(w->wait_for_header(std::chrono::seconds(5)));
  kubectl_direct({"label", "endpointslice", "-n", "default", "by-pool-x1", "touched=yes"});
  const Nodes pool_a = {"edge-node-1", "edge-node-2", "edge-node-3"};
  for (auto* w : {&w2, &w3}) {
    ASSERT_TRUE(eventually([&] { return last_events(*w)["by-pool-x1"].first == "MODIFIED"; },
                           std::chrono::seconds(10)))
        << followers_[0].process->log();
    EXPECT_EQ(last_events(*w)["by-pool-x1"].second, pool_a);
  }
  // kube-proxy's own hostname-scoped slice: each follower trims it to its node.
  kubectl_direct({"label", "endpointslice", "-n", "default", "by-host-x1", "touched=yes"});
  ASSERT_TRUE(eventually([&] { return last_events(w3)["by-host-x1"].first == "MODIFIED"; },
                         std::chrono::seconds(10)));
  EXPECT_EQ(last_events(w3)["by-host-x1"].second, Nodes{"edge-node-3"});
  EXPECT_EQ(open_slice_watches("system:node:edge-node-2"), 0);
  EXPECT_EQ(open_slice_watches("system:node:edge-node-3"), 0)
      << followers_[1].process->log() << cluster_.apiserver().log();
}

// Streaming lists (client-go v1.35+): a follower's kube-proxy is served its streaming list from
// the copy the leader feeds (the follower itself feeds by list+watch, docs/pool-sharing.md), and
// the leader's port answers a follower's streaming list, ADDED events then the end bookmark.
TEST_F(LeaderHub, StreamingListsAreServedOnAFollowerAndOnTheLeadersPort) {
  ReflectorOptions options;
  options.port = followers_[0].proxy_port;
  options.path = kSlices;
  options.user_agent = "kube-proxy/v1.35.0 (linux/amd64) kubernetes/66452049";
  ReflectorClient proxy(options);
  ASSERT_TRUE(proxy.wait_synced(std::chrono::seconds(15))) << followers_[0].process->log();
  EXPECT_EQ(proxy.synced_by(), "watch-list");
  rapidjson::Document slice;
  slice.Parse(proxy.objects()["default/by-pool-x1"].c_str());
  ASSERT_TRUE(slice.IsObject() && slice.HasMember("endpoints"));
  Nodes nodes;
  for (const auto& ep : slice["endpoints"].GetArray()) nodes.insert(ep["nodeName"].GetString());
  EXPECT_EQ(nodes, (Nodes{"edge-node-1", "edge-node-2", "edge-node-3"}));
  EXPECT_EQ(open_slice_watches("system:node:edge-node-2"), 0) << cluster_.apiserver().log();
  EXPECT_EQ(cluster_.apiserver_requests(R"(sendInitialEvents)"), 0);

  auto streamed = kubectl_multiplexer(
      1, node(2) + "/hub-client",
      {"get", "--raw",
       kSlices + "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&"
                 "allowWatchBookmarks=true&timeoutSeconds=1"});
  EXPECT_EQ(streamed.exit_code, 0) << streamed.err;
  const auto added = streamed.out.find(R"({"type":"ADDED")");
  const auto end = streamed.out.find(R"("k8s.io/initial-events-end":"true")");
  EXPECT_NE(added, std::string::npos) << streamed.out;
  EXPECT_NE(end, std::string::npos) << streamed.out;
  EXPECT_LT(added, end);
  EXPECT_NE(streamed.out.find("by-pool-x1"), std::string::npos);
}

// The leader serves its copy unfiltered; each follower applies its own clients' filters.
TEST_F(LeaderHub, AFollowerFiltersForItsOwnClients) {
  apply(
      "apiVersion: v1\nkind: Service\nmetadata:\n  name: kubernetes\n  namespace: default\n"
      "spec:\n  clusterIP: 10.96.0.1\n  ports:\n  - name: https\n    port: 443\n"
      "    protocol: TCP\n    targetPort: 6443\n");
  apply(
      "apiVersion: v1\nkind: Service\nmetadata:\n  name: cloud-lb\n  namespace: default\n"
      "spec:\n  type: LoadBalancer\n  clusterIP: 10.96.9.9\n  ports:\n  - name: http\n"
      "    port: 80\n    protocol: TCP\n    targetPort: 8080\n");
  const std::string services = "/api/v1/services";
  // The follower's Services come through its leader's watch: they reach it a moment after
  // the cloud has them, as any informer's do.
  HttpResponse listed;
  ASSERT_TRUE(eventually(
      [&] {
        listed =
            http_request(followers_[0].proxy_port, "GET", services, {{"User-Agent", kKubeProxy}});
        return listed.status == 200 && listed.body.find("cloud-lb") != std::string::npos;
      },
      std::chrono::seconds(10)))
      << listed.status << " " << listed.body << followers_[0].process->log();
  WatchStream proxy(followers_[0].proxy_port,
                    services + "?watch=true&resourceVersion=" + list_rv(listed.body), kKubeProxy);
  ASSERT_TRUE(proxy.wait_for_header(std::chrono::seconds(5)));
  // discardcloudservice: kube-proxy is shown cloud-lb until it is marked for discarding, then
  // its watch gets cloud-lb DELETED.
  kubectl_direct(
      {"annotate", "service", "-n", "default", "cloud-lb", "svc.openyurt.io/discard=true"});
  EXPECT_TRUE(eventually([&] { return last_events(proxy)["cloud-lb"].first == "DELETED"; },
                         std::chrono::seconds(10)))
      << followers_[0].process->log();
  // masterservice: kubelet's kubernetes Service points at the follower's own HTTPS port.
  ASSERT_TRUE(eventually(
      [&] {
        auto r = kubelet_get(
            followers_[0].proxy_port,
            "/api/v1/namespaces/default/services?fieldSelector=metadata.name%3Dkubernetes");
        return r.body.find(R"("clusterIP":"127.0.0.1")") != std::string::npos;
      },
      std::chrono::seconds(10)))
      << followers_[0].process->log();
  // and the leader's copy is the cloud's, unfiltered.
  auto raw = kubectl_multiplexer(1, node(2) + "/hub-client", {"get", "--raw", services});
  EXPECT_NE(raw.out.find("10.96.0.1"), std::string::npos) << raw.err;
  EXPECT_NE(raw.out.find("svc.openyurt.io/discard"), std::string::npos);
}

TEST_F(LeaderHub, TheLeaderKilledAFollowersClientWatchGoesOn) {
  WatchStream watch(followers_[0].proxy_port,
                    kSlices + "?watch=true&resourceVersion=" + list_rv(follower_list(0)),
                    kKubeProxy);
  ASSERT_TRUE(watch.wait_for_header(std::chrono::seconds(5)));
  cluster_.hub().signal(SIGKILL);
  cluster_.hub().wait_exit(std::chrono::seconds(5));
  // The follower goes back to the cloud on its own (docs/pool-sharing.md: within about 2 s).
  ASSERT_TRUE(wait_follower_source(0, kSliceResource, "cloud", std::chrono::seconds(10)));
  EXPECT_EQ(open_slice_watches("system:node:edge-node-2"), 1);
  expect_next_change(watch);
}

TEST_F(LeaderHub, ALeaderCutOffFromTheCloudIsDroppedByItsFollowers) {
  WatchStream watch(followers_[0].proxy_port,
                    kSlices + "?watch=true&resourceVersion=" + list_rv(follower_list(0)),
                    kKubeProxy);
  ASSERT_TRUE(watch.wait_for_header(std::chrono::seconds(5)));
  cluster_.relay().cut();
  // The leader still answers its port, but its health says it lost the cloud.
  ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(false, std::chrono::seconds(20)));
  auto health = kubectl_multiplexer(1, node(2) + "/hub-client", {"get", "--raw", "/healthz"});
  EXPECT_NE(health.exit_code, 0);
  EXPECT_NE(health.err.find("no apiserver is reachable"), std::string::npos) << health.err;
  ASSERT_TRUE(wait_follower_source(0, kSliceResource, "cloud", std::chrono::seconds(10)));
  // A change the leader cannot see reaches the follower's client.
  expect_next_change(watch);
}

TEST_F(LeaderHub, AFollowerRebootedOfflineListsWhatItsLeaderFedIt) {
  // A change the follower learns from its leader only.
  kubectl_direct({"label", "endpointslice", "-n", "default", "by-pool-x1", "touched=yes"});
  const std::string touched = R"("touched":"yes")";
  ASSERT_TRUE(eventually([&] { return follower_list(0).find(touched) != std::string::npos; },
                         std::chrono::seconds(10)));
  const auto ops = [&] {
    return std::max(0.0, followers_[0].metric("node_yurthub_cache_written_ops_total"));
  };
  ASSERT_TRUE(eventually(
      [&] { return ops() > 0 && followers_[0].metric("node_yurthub_cache_pending_ops") <= 0; },
      std::chrono::seconds(5)));
  // The leader and the follower go down; the follower comes back with no cloud and no leader.
  cluster_.hub().signal(SIGKILL);
  followers_[0].process->signal(SIGKILL);
  followers_[0].process->wait_exit(std::chrono::seconds(5));
  auto flags = hub_flags(2, port_);
  flags.push_back("--server-addr=https://127.0.0.1:1");
  PeerHub rebooted = cluster_.start_peer_hub(node(2), flags);
  auto offline = http_request(rebooted.proxy_port, "GET", kSlices, {{"User-Agent", kKubeProxy}});
  ASSERT_EQ(offline.status, 200) << offline.body << rebooted.process->log();
  EXPECT_NE(offline.body.find(touched), std::string::npos) << offline.body;
}

TEST_F(LeaderHub, TheMultiplexerPortServesOnlyThePoolsNodesAndResources) {
  // A follower's certificate: the pool-scope lists, and the leader's health.
  // (--raw: the port serves no discovery, which kubectl's other verbs read first.)
  auto listed = kubectl_multiplexer(1, node(2) + "/hub-client", {"get", "--raw", kSlices});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("by-pool-x1"), std::string::npos) << listed.out;
  auto health = kubectl_multiplexer(1, node(2) + "/hub-client", {"get", "--raw", "/healthz"});
  EXPECT_EQ(health.exit_code, 0) << health.err;
  EXPECT_EQ(health.out, "ok");
  // Anything else is refused, never forwarded with the leader's identity.
  auto pods = kubectl_multiplexer(1, node(2) + "/hub-client", {"get", "--raw", "/api/v1/pods"});
  EXPECT_NE(pods.exit_code, 0);
  EXPECT_NE(pods.err.find("Forbidden"), std::string::npos) << pods.err;
  // A node of pool-b, the cluster admin (not a node), no certificate: refused.
  auto other_pool = kubectl_multiplexer(1, node(4) + "/hub-client", {"get", "--raw", kSlices});
  EXPECT_NE(other_pool.exit_code, 0);
  EXPECT_NE(other_pool.err.find("not a node of this hub's pool"), std::string::npos)
      << other_pool.err;
  auto admin = kubectl_multiplexer(1, "admin", {"get", "--raw", kSlices});
  EXPECT_NE(admin.exit_code, 0) << admin.out;
  auto anonymous = kubectl_multiplexer(1, "", {"get", "--raw", kSlices});
  EXPECT_NE(anonymous.exit_code, 0) << anonymous.out;
  EXPECT_EQ(cluster_.apiserver_requests(R"(user=system:node:edge-node-4)"), 0);
}

}  // namespace
}  // namespace yurthub::test
