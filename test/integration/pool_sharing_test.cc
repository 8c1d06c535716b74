// The node's shared watch cache of pool-scope resources (pool/shared_cache.h) with the real
// binaries: several clients on one node hold one upstream watch per resource between them, each
// still filtered as itself; a client's watch goes on through a partition (a TcpRelay cut between
// the hub and the cloud) and receives what changed meanwhile as events, also when the partition
// outlasts the apiserver's event window (the hub re-lists and sends the difference).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <csignal>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "test/integration/cluster.h"
#include "test/integration/http_client.h"
#include "test/integration/pool_events.h"

namespace yurthub::test {
namespace {

constexpr const char* kKubeProxy = "kube-proxy/v1.32.4 (linux/amd64) kubernetes/abc1234";
constexpr const char* kCoreDns = "coredns/v1.11.3";
constexpr const char* kCilium = "cilium-agent/1.16.3";
const std::string kSlices = "/apis/discovery.k8s.io/v1/endpointslices";
const std::string kServices = "/api/v1/services";
// The fake apiserver's log line of an upstream watch of all EndpointSlices.
const std::string kSliceWatches = R"(\] GET /apis/discovery\.k8s\.io/v1/endpointslices\?\S*watch=)";
const std::string kServiceWatches = R"(\] GET /api/v1/services\?\S*watch=)";
const std::string kSliceLists =
    R"(\] GET /apis/discovery\.k8s\.io/v1/endpointslices(\?(?!\S*watch=)\S*)? user=)";

class PoolSharing : public testing::Test {
 protected:
  explicit PoolSharing(ClusterOptions o = options()) : cluster_(std::move(o)) {}
  static ClusterOptions options() {
    ClusterOptions o;
    o.seeds = {"fake_apiserver/topology-objects.json"};
    o.through_relay = true;
    return o;
  }
  void SetUp() override {
    cluster_.start_apiserver();
    cluster_.start_hub();
    // The shared cache has listed (its answers are counted from the first one on).
    ASSERT_TRUE(
        eventually([&] { return shared_answers(kKubeProxy, kSlices); }, std::chrono::seconds(10)))
        << cluster_.hub().log();
  }
  HttpResponse get_as(const char* agent, const std::string& target) {
    return http_request(cluster_.proxy_port(), "GET", target, {{"User-Agent", agent}});
  }
  // Whether a list as `agent` is answered by the shared cache now.
  bool shared_answers(const char* agent, const std::string& target) {
    const double before = shared_count();
    return get_as(agent, target).status == 200 && shared_count() > before;
  }
  double shared_count() {
    double sum = 0;
    for (const char* verb : {"list", "watch"}) {
      for (const char* resource :
           {"discovery.k8s.io/v1/endpointslices", "/v1/services", "/v1/endpoints"}) {
        const double v =
            cluster_.metric(std::string(R"(node_yurthub_pool_answers_total{resource=")") +
                            resource + R"(",verb=")" + verb + R"(",answer="shared"})");
        if (v > 0) sum += v;
      }
    }
    return sum;
  }
  // The shared cache's upstream watch of EndpointSlices, served from `server`.
  static std::string target(const std::string& server) {
    return R"(node_yurthub_target_for_multiplexer_requests_collector{verb="watch",)"
           R"(resource="discovery.k8s.io/v1/endpointslices",subresources="",)"
           R"(client="multiplexer-proxy-edge-node-1",server=")" +
           server + R"("})";
  }
  void kubectl_direct(const std::vector<std::string>& args) {
    auto r = cluster_.kubectl_direct(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // kube-proxy's watch of EndpointSlices from the resourceVersion of its list, as it opens one.
  std::string kube_proxy_watch() {
    return kSlices + "?watch=true&resourceVersion=" + list_rv(get_as(kKubeProxy, kSlices).body);
  }
  // Whether `w` got the two changes the partition tests make in the cloud while cut off.
  static bool saw_partition_changes(const WatchStream& w, std::chrono::milliseconds limit) {
    return eventually(
        [&] {
          auto last = last_events(w);
          return last["by-host-x1"].first == "MODIFIED" && last["plain-x1"].first == "DELETED";
        },
        limit);
  }
  void partition() {
    cluster_.relay().cut();
    ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(false, std::chrono::seconds(20)));
  }
  void heal() {
    cluster_.relay().heal();
    ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(true, std::chrono::seconds(20)));
  }

  Cluster cluster_;
};

TEST_F(PoolSharing, ClientsOnOneNodeShareOneUpstreamWatchPerResource) {
  const std::string from = list_rv(get_as(kKubeProxy, kSlices).body);
  ASSERT_FALSE(from.empty());
  const std::string watch = kSlices + "?watch=true&resourceVersion=" + from;
  WatchStream proxy(cluster_.proxy_port(), watch, kKubeProxy);
  WatchStream dns(cluster_.proxy_port(), watch, kCoreDns);
  WatchStream cilium(cluster_.proxy_port(), watch, kCilium);
  WatchStream services(cluster_.proxy_port(), kServices + "?watch=true", kKubeProxy);
  for (auto* w : {&proxy, &dns, &cilium, &services}) {
    ASSERT_TRUE(w->wait_for_header(std::chrono::seconds(5)));
    ASSERT_EQ(w->status(), 200);
  }
  // Every one of them, and the hub's own Services informer, on one upstream watch each.
  EXPECT_EQ(cluster_.apiserver_requests(kSliceWatches), 1) << cluster_.apiserver().log();
  EXPECT_EQ(cluster_.apiserver_requests(kServiceWatches), 1) << cluster_.apiserver().log();

  kubectl_direct({"label", "endpointslice", "-n", "default", "by-pool-x1", "touched=yes"});
  const Nodes pool_a = {"edge-node-1", "edge-node-2"};
  const Nodes all = {"edge-node-1", "edge-node-2", "edge-node-3", "edge-node-4"};
  for (auto* w : {&proxy, &dns, &cilium}) {
    ASSERT_TRUE(w->wait_for_events(1, std::chrono::seconds(10))) << cluster_.hub().log();
  }
  // Each filtered as itself: kube-proxy and coredns see pool-a's endpoints, cilium all.
  EXPECT_EQ(last_events(proxy)["by-pool-x1"], std::make_pair(std::string("MODIFIED"), pool_a));
  EXPECT_EQ(last_events(dns)["by-pool-x1"], std::make_pair(std::string("MODIFIED"), pool_a));
  EXPECT_EQ(last_events(cilium)["by-pool-x1"], std::make_pair(std::string("MODIFIED"), all));
  // The initial state of the services watch came from the cache as ADDED events.
  EXPECT_EQ(last_events(services)["by-pool"].first, "ADDED");
  EXPECT_EQ(cluster_.apiserver_requests(kSliceWatches), 1);
  EXPECT_GE(
      cluster_.metric(
          R"(node_yurthub_pool_events_fanned_out_total{resource="discovery.k8s.io/v1/endpointslices"})"),
      3);
  EXPECT_EQ(cluster_.metric(target("cloud")), 1);
}

TEST_F(PoolSharing, SelectorsAndPagingAreTheApiserversOwn) {
  // A label selector, as kube-proxy sends one; a field selector; a page of two.
  auto selected =
      get_as(kCilium, kSlices + "?labelSelector=kubernetes.io%2Fservice-name%3Dby-host");
  ASSERT_EQ(selected.status, 200) << selected.body;
  rapidjson::Document doc;
  doc.Parse(selected.body.c_str());
  ASSERT_EQ(doc["items"].Size(), 1u) << selected.body;
  EXPECT_STREQ(doc["kind"].GetString(), "EndpointSliceList");
  EXPECT_FALSE(doc["items"][0].HasMember("kind"));  // list items carry no TypeMeta
  auto by_name = get_as(kCilium, kServices + "?fieldSelector=metadata.name%3Dplain");
  doc.Parse(by_name.body.c_str());
  ASSERT_EQ(doc["items"].Size(), 1u) << by_name.body;
  auto bad = get_as(kCilium, kServices + "?fieldSelector=spec.bogus%3Dx");
  EXPECT_EQ(bad.status, 400) << bad.body;

  std::set<std::string> names;
  std::string next = kSlices + "?limit=2";
  for (int pages = 0; pages < 5 && !next.empty(); ++pages) {
    auto page = get_as(kCilium, next);
    ASSERT_EQ(page.status, 200) << page.body;
    doc.Parse(page.body.c_str());
    for (const auto& item : doc["items"].GetArray())
      names.insert(item["metadata"]["name"].GetString());
    const auto& meta = doc["metadata"];
    next = meta.HasMember("continue")
               ? kSlices + "?limit=2&continue=" + std::string(meta["continue"].GetString())
               : "";
  }
  EXPECT_EQ(names.size(), 5u);
  EXPECT_TRUE(next.empty());
}

TEST_F(PoolSharing, AWatchOpenedBeforeAMinutesPartitionReceivesWhatChangedMeanwhile) {
  WatchStream proxy(cluster_.proxy_port(), kube_proxy_watch(), kKubeProxy);
  ASSERT_TRUE(proxy.wait_for_header(std::chrono::seconds(5)));
  const int lists_before = cluster_.apiserver_requests(kSliceLists);

  const auto cut_at = std::chrono::steady_clock::now();
  partition();
  // Offline, the hub holds the shared cache's own watch open from the node cache.
  EXPECT_TRUE(
      eventually([&] { return cluster_.metric(target("cache")) == 1; }, std::chrono::seconds(15)));
  kubectl_direct({"label", "endpointslice", "-n", "default", "by-host-x1", "touched=yes"});
  kubectl_direct({"delete", "endpointslice", "-n", "default", "plain-x1"});
  // A partition of a minute (issue 32): the client's watch is still open when the link returns.
  std::this_thread::sleep_until(cut_at + std::chrono::seconds(60));
  EXPECT_FALSE(proxy.ended());
  heal();

  ASSERT_TRUE(saw_partition_changes(proxy, std::chrono::seconds(20))) << cluster_.hub().log();
  EXPECT_FALSE(proxy.ended());
  // The hub resumed its watch: nothing was listed again upstream.
  EXPECT_EQ(cluster_.apiserver_requests(kSliceLists), lists_before);
}

// The fake apiserver keeps 5 events: a partition with more changes than that makes the hub's
// resumed watch 410; it re-lists, and the client gets the difference.
class PoolSharingShortWindow : public PoolSharing {
 protected:
  PoolSharingShortWindow() : PoolSharing(short_window()) {}
  static ClusterOptions short_window() {
    ClusterOptions o = options();
    o.apiserver_flags.push_back("--history=5");
    return o;
  }
};

TEST_F(PoolSharingShortWindow, APartitionLongerThanTheWatchWindowEndsInEventsNotARelist) {
  WatchStream proxy(cluster_.proxy_port(), kube_proxy_watch(), kKubeProxy);
  ASSERT_TRUE(proxy.wait_for_header(std::chrono::seconds(5)));
  const int lists_before = cluster_.apiserver_requests(kSliceLists);

  partition();
  kubectl_direct({"delete", "endpointslice", "-n", "default", "plain-x1"});
  kubectl_direct({"label", "endpointslice", "-n", "default", "by-host-x1", "touched=yes"});
  for (int i = 0; i < 8; ++i) {
    kubectl_direct({"label", "namespace", "default", "churn=" + std::to_string(i), "--overwrite"});
  }
  heal();

  ASSERT_TRUE(saw_partition_changes(proxy, std::chrono::seconds(30))) << cluster_.hub().log();
  EXPECT_FALSE(proxy.ended());
  // The hub re-listed once upstream; its client did not.
  EXPECT_GT(cluster_.apiserver_requests(kSliceLists), lists_before);
  EXPECT_EQ(last_events(proxy)["by-host-x1"].second, Nodes{"edge-node-1"});
}

// Bearer-token callers: served from the shared cache only once the apiserver said, asked with
// their own token, that they may read it there.
class PoolSharingTokens : public PoolSharing {
 protected:
  PoolSharingTokens() : PoolSharing(with_denied_pod()) {}
  static ClusterOptions with_denied_pod() {
    ClusterOptions o = options();
    o.apiserver_flags.push_back("--deny-user=system:serviceaccount:default:web");
    return o;
  }
  HttpResponse get_with(const std::string& token, const std::string& target) {
    return http_request(cluster_.proxy_port(), "GET", target,
                        {{"User-Agent", kKubeProxy}, {"Authorization", "Bearer " + token}});
  }
  double reviews(const char* result) {
    const double v = cluster_.metric(
        std::string(R"(node_yurthub_pool_access_reviews_total{result=")") + result + R"("})");
    return v < 0 ? 0 : v;
  }
};

TEST_F(PoolSharingTokens, ATokenIsServedOnlyWhatTheApiserverLetsItRead) {
  const double shared_before = shared_count();
  auto admin = get_with("admin-token-0123456789", kSlices);
  ASSERT_EQ(admin.status, 200) << admin.body;
  EXPECT_EQ(reviews("allowed"), 1);
  EXPECT_EQ(shared_count(), shared_before + 1);
  // Remembered: the next list asks nobody.
  ASSERT_EQ(get_with("admin-token-0123456789", kSlices).status, 200);
  EXPECT_EQ(reviews("allowed"), 1);
  EXPECT_EQ(shared_count(), shared_before + 2);

  // The apiserver refuses this pod: so does the hub, by forwarding it.
  const int lists = cluster_.apiserver_requests(kSliceLists);
  auto pod = get_with("pod-token-0123456789", kSlices);
  EXPECT_EQ(pod.status, 403) << pod.body;
  EXPECT_EQ(reviews("denied"), 1);
  EXPECT_EQ(cluster_.apiserver_requests(kSliceLists), lists + 1);
  EXPECT_EQ(shared_count(), shared_before + 2);
  // A made-up token is not authenticated: the review fails and the request is refused upstream.
  auto made_up = get_with("made-up-token", kSlices);
  EXPECT_EQ(made_up.status, 401) << made_up.body;
  EXPECT_EQ(shared_count(), shared_before + 2);
}

TEST_F(PoolSharing, ThePoolsLeaderHubConfigMapReplacesTheSharedSet) {
  // yurt-manager's ConfigMap for pool-a: only Services, plus v1 Endpoints.
  auto r = cluster_.kubectl_direct(
      {"apply", "-f", "-"}, std::chrono::seconds(30),
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: leader-hub-pool-a\n"
      "  namespace: kube-system\n  labels:\n    openyurt.io/configmap-name: leader-hub-pool-a\n"
      "data:\n  pool-scoped-metadata: \"/v1/services,/v1/endpoints\"\n"
      "  enable-leader-election: \"false\"\n  leaders: \"\"\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(cluster_.hub().wait_for_log("no longer sharing discovery.k8s.io/v1/endpointslices",
                                          std::chrono::seconds(15)))
      << cluster_.hub().log();
  ASSERT_TRUE(cluster_.hub().wait_for_log("sharing /v1/endpoints", std::chrono::seconds(5)));
  // EndpointSlices go upstream again, each list its own; Endpoints come from the shared cache.
  const int lists = cluster_.apiserver_requests(kSliceLists);
  ASSERT_EQ(get_as(kKubeProxy, kSlices).status, 200);
  EXPECT_EQ(cluster_.apiserver_requests(kSliceLists), lists + 1);
  ASSERT_TRUE(
      eventually([&] { return shared_answers(kKubeProxy, "/api/v1/namespaces/default/endpoints"); },
                 std::chrono::seconds(10)));
  // The ConfigMap gone, the flag's set is back.
  r = cluster_.kubectl_direct({"delete", "configmap", "-n", "kube-system", "leader-hub-pool-a"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(
      eventually([&] { return shared_answers(kKubeProxy, kSlices); }, std::chrono::seconds(15)))
      << cluster_.hub().log();
}

TEST_F(PoolSharing, ANodeRebootedOfflineServesTheSharedCacheFromDisk) {
  auto online = get_as(kKubeProxy, kSlices);
  ASSERT_EQ(online.status, 200);
  // The shared cache's own list (made at start, through the hub, as a cache agent's) is on disk
  // once the node cache has nothing pending.
  // Its first commit may still be on its way under load: wait for it rather than read it once.
  ASSERT_TRUE(eventually([&] { return cluster_.cache_ops() > 0; }, std::chrono::seconds(10)));
  ASSERT_TRUE(cluster_.wait_cache_committed(cluster_.cache_ops() - 1));
  partition();
  cluster_.hub().signal(SIGKILL);
  cluster_.hub().wait_exit(std::chrono::seconds(5));
  cluster_.start_hub();  // the node reboots without its cloud link
  ASSERT_TRUE(
      eventually([&] { return shared_answers(kKubeProxy, kSlices); }, std::chrono::seconds(10)))
      << cluster_.hub().log();
  auto offline = get_as(kKubeProxy, kSlices);
  ASSERT_EQ(offline.status, 200) << offline.body;
  rapidjson::Document a, b;
  a.Parse(online.body.c_str());
  b.Parse(offline.body.c_str());
  ASSERT_EQ(a["items"].Size(), b["items"].Size());
  // And a watch opened now goes on when the link is back.
  WatchStream watch(cluster_.proxy_port(),
                    kSlices + "?watch=true&resourceVersion=" + list_rv(offline.body), kKubeProxy);
  ASSERT_TRUE(watch.wait_for_header(std::chrono::seconds(5)));
  kubectl_direct({"label", "endpointslice", "-n", "default", "by-host-x1", "touched=yes"});
  heal();
  EXPECT_TRUE(eventually([&] { return last_events(watch)["by-host-x1"].first == "MODIFIED"; },
                         std::chrono::seconds(20)))
      << cluster_.hub().log();
}

}  // namespace
}  // namespace yurthub::test
