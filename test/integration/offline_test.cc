// The node while the cloud is gone, with the real binaries: what kubelet read online is served
// offline (the same objects, any number of selectors per resource), a never-listed resource is a
// 404, kubectl works offline once it is a cache agent, a hub killed with kill -9 in the middle of
// 10,000 watch events restarts offline with a consistent cache, and offline watches end when the
// cloud comes back.
#include <signal.h>

#include <map>
#include <regex>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "test/base/json_test_support.h"
#include "test/integration/cluster.h"
#include "test/integration/http_client.h"

namespace yurthub::test {
namespace {

using ::yurthub::test_support::parse_json;

using testing::HasSubstr;

const std::string kNodePods = "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1";

// "namespace/name@resourceVersion" of every item of a list, sorted, or of one object.
std::set<std::string> identities(const std::string& json) {
  std::set<std::string> out;
  auto doc = parse_json(json);
  if (doc.HasParseError() || !doc.IsObject()) return out;
  auto add = [&](const rapidjson::Value& o) {
    const auto& m = o["metadata"];
    std::string ns = m.HasMember("namespace") ? m["namespace"].GetString() : "";
    out.insert(ns + "/" + m["name"].GetString() + "@" + m["resourceVersion"].GetString());
  };
  if (doc.HasMember("items")) {
    for (const auto& item : doc["items"].GetArray()) add(item);
  } else if (doc.HasMember("metadata")) {
    add(doc);
  }
  return out;
}

class OfflineHub : public testing::Test {
 protected:
  void SetUp() override { cluster_.start_apiserver(); }
  void go_offline() {
    cluster_.stop_apiserver(SIGKILL);
    wait_until_unhealthy();
  }
  void wait_until_unhealthy() {
    ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(false))
        << "the hub never noticed the apiserver was gone";
  }
  int port() const { return cluster_.proxy_port(); }
  Cluster cluster_{demo_cluster()};
};

TEST_F(OfflineHub, KubeletKeepsReadingWhileTheCloudIsGone) {
  cluster_.start_hub();
  const std::vector<std::string> reads = {
      kNodePods + "&limit=500&resourceVersion=0",                 // kubelet's pod list
      "/api/v1/nodes/edge-node-1",                                // kubelet's node
      "/api/v1/services?resourceVersion=0",                       // kubelet's service list
      "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb",  // a second selector on pods
  };
  std::map<std::string, std::set<std::string>> online;
  for (const auto& target : reads) {
    auto r = kubelet_get(port(), target);
    ASSERT_EQ(r.status, 200) << target << "\n" << r.body;
    online[target] = identities(r.body);
    ASSERT_FALSE(online[target].empty()) << target;
  }
  // A watch, as kubelet keeps on its pods: a change made now must be in the cache offline.
  const std::string list_rv =
      parse_json(kubelet_get(port(), kNodePods).body)["metadata"]["resourceVersion"].GetString();
  WatchStream watch(port(),
                    kNodePods + "&watch=true&allowWatchBookmarks=true&resourceVersion=" + list_rv);
  const double ops_before = cluster_.cache_ops();
  auto patched =
      cluster_.kubectl_direct({"label", "pod", "web-0", "-n", "default", "offline-test=yes"});
  ASSERT_EQ(patched.exit_code, 0) << patched.err;
  ASSERT_TRUE(watch.wait_for_events(1, std::chrono::seconds(10)));
  EXPECT_THAT(watch.events()[0], HasSubstr("\"type\":\"MODIFIED\""));
  ASSERT_TRUE(cluster_.wait_cache_committed(ops_before));

  cluster_.stop_apiserver(SIGKILL);
  // At once, before the health checker has judged the server: a failed connection to a server
  // still trusted falls back to the cache for gets and lists (no 503 window).
  auto right_away = kubelet_get(port(), "/api/v1/nodes/edge-node-1");
  EXPECT_EQ(right_away.status, 200) << right_away.body;
  wait_until_unhealthy();
  EXPECT_TRUE(watch.wait_ended(std::chrono::seconds(5)));  // the upstream watch broke
  for (const auto& target : reads) {
    auto r = kubelet_get(port(), target);
    ASSERT_EQ(r.status, 200) << target << "\n" << r.body;
    if (target.find(kNodePods) == 0) {
      EXPECT_THAT(r.body, HasSubstr("\"offline-test\":\"yes\""));  // the watch event was kept
    } else {
      EXPECT_EQ(identities(r.body), online[target]) << target;
    }
  }
  // Kubelet's watch offline: held open (here until its timeoutSeconds), no error.
  auto held = kubelet_get(port(), kNodePods + "&watch=true&timeoutSeconds=1");
  EXPECT_EQ(held.status, 200);
  // Never listed: 404, never an empty list.
  auto never = kubelet_get(port(), "/api/v1/configmaps");
  EXPECT_EQ(never.status, 404);
  EXPECT_THAT(never.body, HasSubstr("\"kind\":\"Status\""));
  // Writes need the cloud.
  auto write = http_request(port(), "DELETE", "/api/v1/namespaces/default/pods/web-0",
                            {{"User-Agent", kKubeletAgent}});
  EXPECT_EQ(write.status, 503);
  EXPECT_THAT(write.body, HasSubstr("offline"));
}

TEST_F(OfflineHub, KubectlGetPodsWorksOfflineOnceItIsACacheAgent) {
  cluster_.start_hub();
  // Configured while the hub runs: the hub watches yurt-hub-cfg and applies it without a restart.
  auto cfg =
      cluster_.kubectl_direct({"apply", "-f", "-"}, std::chrono::seconds(30),
                              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yurt-hub-cfg\n"
                              "  namespace: kube-system\ndata:\n  cache_agents: kubectl\n");
  ASSERT_EQ(cfg.exit_code, 0) << cfg.err;
  ASSERT_TRUE(cluster_.hub().wait_for_log("cache agents: .*kubectl", std::chrono::seconds(10)))
      << cluster_.hub().log();
  auto online = cluster_.kubectl({"get", "pods", "-A", "-o", "name"});
  ASSERT_EQ(online.exit_code, 0) << online.err;
  EXPECT_THAT(online.out, HasSubstr("pod/web-0"));

  go_offline();
  auto offline = cluster_.kubectl({"get", "pods", "-A", "-o", "name"});
  EXPECT_EQ(offline.exit_code, 0) << offline.err;
  EXPECT_EQ(offline.out, online.out);
  auto pod =
      cluster_.kubectl({"get", "pod", "web-0", "-n", "default", "-o", "jsonpath={.spec.nodeName}"});
  EXPECT_EQ(pod.out, "edge-node-1") << pod.err;
}

TEST_F(OfflineHub, RestartedWhileOfflineServesAtOnce) {
  cluster_.start_hub();
  const double ops_before = cluster_.cache_ops();
  auto online = kubelet_get(port(), kNodePods);
  ASSERT_EQ(online.status, 200);
  ASSERT_TRUE(cluster_.wait_cache_committed(ops_before));
  go_offline();
  cluster_.hub().signal(SIGKILL);
  cluster_.hub().wait_exit(std::chrono::seconds(5));
  cluster_.start_hub();  // the node reboots without its cloud link
  auto offline = kubelet_get(port(), kNodePods);
  EXPECT_EQ(offline.status, 200) << offline.body;
  EXPECT_EQ(identities(offline.body), identities(online.body));
}

TEST_F(OfflineHub, KillNineDuringTenThousandWatchEventsLeavesAConsistentCache) {
  cluster_.start_hub();
  const std::string list = "/api/v1/namespaces/churn/configmaps";
  auto listed = kubelet_get(port(), list);
  ASSERT_EQ(listed.status, 200);
  const std::string rv = parse_json(listed.body)["metadata"]["resourceVersion"].GetString();
  WatchStream watch(port(), list + "?watch=true&resourceVersion=" + rv);
  auto churn = cluster_.kubectl_direct(
      {"create", "--raw", "/_fake/churn?objects=100&events=10000", "-f", "-"},
      std::chrono::seconds(30), "{}");
  ASSERT_EQ(churn.exit_code, 0) << churn.err;
  // Kill the hub mid-stream, somewhere after the first few thousand events.
  ASSERT_TRUE(watch.wait_for_events(3000, std::chrono::seconds(60))) << watch.event_count();
  cluster_.hub().signal(SIGKILL);
  cluster_.hub().wait_exit(std::chrono::seconds(5));
  const std::size_t seen = watch.event_count();
  cluster_.stop_apiserver(SIGKILL);

  // Every write the apiserver made: (name, seq) -> resourceVersion.
  std::map<std::string, std::string> sent;
  const std::string log = cluster_.apiserver().log();
  const std::regex line(R"(churn churn/(c-\d+) seq=(\d+) rv=(\d+))");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), line); it != std::sregex_iterator();
       ++it) {
    sent[(*it)[1].str() + "#" + (*it)[2].str()] = (*it)[3].str();
  }
  ASSERT_GE(sent.size(), seen);

  cluster_.start_hub();  // restarted offline
  auto offline = kubelet_get(port(), list);
  ASSERT_EQ(offline.status, 200) << offline.body;
  auto doc = parse_json(offline.body);
  ASSERT_FALSE(doc.HasParseError());
  ASSERT_GT(doc["items"].Size(), 0u);
  for (const auto& item : doc["items"].GetArray()) {
    const std::string name = item["metadata"]["name"].GetString();
    const std::string seq = item["data"]["seq"].GetString();
    const std::string object_rv = item["metadata"]["resourceVersion"].GetString();
    auto it = sent.find(name + "#" + seq);
    ASSERT_NE(it, sent.end()) << name << " seq " << seq << " was never sent";
    EXPECT_EQ(it->second, object_rv) << name << " seq " << seq;
  }
  std::cout << "killed after " << seen << " events; " << doc["items"].Size()
            << " objects cached, all at a resourceVersion the apiserver sent\n";
}

TEST_F(OfflineHub, CloudComingBackEndsOfflineWatches) {
  cluster_.start_hub();
  ASSERT_EQ(kubelet_get(port(), kNodePods).status, 200);
  go_offline();
  WatchStream offline_watch(port(), kNodePods + "&watch=true");  // no timeout: held
  ASSERT_TRUE(offline_watch.wait_for_header(std::chrono::seconds(5)));
  EXPECT_EQ(offline_watch.status(), 200);
  EXPECT_FALSE(offline_watch.wait_ended(std::chrono::milliseconds(500)));  // held open

  cluster_.start_apiserver();
  // --heartbeat-interval-seconds=1 and the default healthy threshold of 2: a few seconds.
  EXPECT_TRUE(offline_watch.wait_ended(std::chrono::seconds(10)));
  auto online = kubelet_get(port(), kNodePods);
  EXPECT_EQ(online.status, 200);
  EXPECT_TRUE(cluster_.apiserver().wait_for_log("GET /api/v1/pods\\?fieldSelector",
                                                std::chrono::seconds(5)))
      << "the request after the cloud came back did not reach the apiserver";
}

TEST(CacheFailure, AFullDiskMakesTheClientRelistInsteadOfLosingWritesSilently) {
  ClusterOptions options;
  options.apiserver_flags = {"--generate-pods=3000", "--generate-pod-bytes=10240",
                             "--generate-node=edge-node-1"};
  options.hub_flags = {"--disk-cache-size-mb=16"};  // a ~31 MB list cannot fit
  Cluster cluster(options);
  cluster.start_apiserver();
  cluster.start_hub();
  const std::string list = "/api/v1/namespaces/bulk/pods";
  auto listed = kubelet_get(cluster.proxy_port(), list);
  ASSERT_EQ(listed.status, 200);  // the client gets its list whatever the disk does
  EXPECT_GT(listed.body.size(), 30u * 1000 * 1000);
  double failures = 0;
  for (int i = 0; i < 200 && failures < 1; ++i) {
    failures = cluster.metric(R"(node_yurthub_cache_write_failures_total{reason="full"})");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_GE(failures, 1) << cluster.hub().log();
  EXPECT_THAT(cluster.hub().log(), HasSubstr("marked stale"));
  // kubelet's watch on that list is told at once to list again (410 Expired), as the apiserver
  // would, so the cache is rebuilt rather than left missing writes.
  const std::string rv = parse_json(listed.body)["metadata"]["resourceVersion"].GetString();
  WatchStream watch(cluster.proxy_port(), list + "?watch=true&resourceVersion=" + rv);
  EXPECT_TRUE(watch.wait_ended(std::chrono::seconds(10)));
  ASSERT_EQ(watch.event_count(), 1u);
  EXPECT_THAT(watch.events()[0], HasSubstr("\"type\":\"ERROR\""));
  EXPECT_THAT(watch.events()[0], HasSubstr("\"code\":410"));
  EXPECT_TRUE(cluster.hub_running());
}

}  // namespace
}  // namespace yurthub::test
