// Streaming lists (WatchList, client-go v1.35+) through the real hub, with the test's client-go
// reflector (reflector_client.h) standing for a 1.35 kubelet and kube-proxy, against the fake
// apiserver speaking WatchList as kube-apiserver 1.34+ does (and as v1.26 does, with 422):
// kubelet's pods synced online by a streaming list only, then after an offline reboot the same
// streaming list answered from the cache, the plain list too, and a set never seen answered with
// an error the client falls back on; kube-proxies on one node sharing one upstream watch.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <fstream>
#include <set>
#include <sstream>

#include "test/base/json_test_support.h"
#include "test/integration/cluster.h"
#include "test/integration/kube_protobuf.h"
#include "test/integration/kubelet_node.h"
#include "test/integration/reflector_client.h"

namespace yurthub::test {
namespace {

constexpr const char* kKubelet135 = "kubelet/v1.35.0 (linux/amd64) kubernetes/66452049";
constexpr const char* kKubeProxy135 = "kube-proxy/v1.35.0 (linux/amd64) kubernetes/66452049";
constexpr const char* kCoreDns = "coredns/v1.12.1";
const std::string kPods = "/api/v1/pods";
const std::string kSlices = "/apis/discovery.k8s.io/v1/endpointslices";
// The fake apiserver's log lines of a plain list of pods (no watch) and of a streaming list.
const std::string kPlainPodLists = R"(\] GET /api/v1/pods(\?(?!\S*watch=)\S*)? user=)";
const std::string kStreamingPodLists = R"(\] GET /api/v1/pods\?\S*sendInitialEvents=true\S* user=)";

ReflectorOptions kubelet_pods(int port) {
  ReflectorOptions o;
  o.port = port;
  o.path = kPods;
  o.field_selector = "spec.nodeName%3Dedge-node-1";
  o.user_agent = kKubelet135;
  return o;
}

std::set<std::string> names(const std::map<std::string, std::string>& objects) {
  std::set<std::string> out;
  for (const auto& [key, json] : objects) out.insert(key);
  return out;
}

class WatchListNode : public testing::Test {
 protected:
  explicit WatchListNode(ClusterOptions o = demo_cluster()) : cluster_(std::move(o)) {}
  void SetUp() override {
    cluster_.start_apiserver();
    cluster_.start_hub();
  }
  // The link is cut and the node reboots (the hub restarts) while the cloud is gone.
  void reboot_offline() {
    cluster_.apiserver().signal(SIGSTOP);
    ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(false));
    cluster_.hub().signal(SIGTERM);
    cluster_.hub().wait_exit(std::chrono::seconds(10));
    cluster_.start_hub();
  }
  void TearDown() override {
    if (cluster_.apiserver().running()) cluster_.apiserver().signal(SIGCONT);
  }
  Cluster cluster_;
};

// demo-objects.json's pods bound to edge-node-1.
const std::set<std::string> kNodePods = {"default/web-0", "kube-system/coredns-edge1",
                                         "kube-system/kube-proxy-edge1"};

TEST_F(WatchListNode, KubeletsStreamingListIsCachedAndAnsweredAfterAnOfflineReboot) {
  {
    ReflectorClient kubelet(kubelet_pods(cluster_.proxy_port()));
    ASSERT_TRUE(kubelet.wait_synced(std::chrono::seconds(10))) << cluster_.hub().log();
    EXPECT_EQ(kubelet.synced_by(), "watch-list");
    EXPECT_EQ(names(kubelet.objects()), kNodePods) << cluster_.apiserver().log();
    ASSERT_TRUE(cluster_.wait_cache_committed(0));
  }
  // Online, kubelet made no plain list: only the streaming list reached the apiserver.
  EXPECT_EQ(cluster_.apiserver_requests(kPlainPodLists), 0) << cluster_.apiserver().log();
  EXPECT_EQ(cluster_.apiserver_requests(kStreamingPodLists), 1) << cluster_.apiserver().log();

  reboot_offline();
  // The same streaming list, answered from the cache at once: every pod, then the end bookmark.
  ReflectorClient kubelet(kubelet_pods(cluster_.proxy_port()));
  ASSERT_TRUE(kubelet.wait_synced(std::chrono::seconds(1))) << cluster_.hub().log();
  EXPECT_EQ(kubelet.synced_by(), "watch-list");
  EXPECT_EQ(names(kubelet.objects()), kNodePods);
  EXPECT_FALSE(kubelet.resource_version().empty());
  ASSERT_FALSE(kubelet.statuses().empty());
  EXPECT_EQ(kubelet.statuses().front(), 200);
  EXPECT_NE(kubelet.requests().front().find("sendInitialEvents=true"), std::string::npos);
  // The plain list of the same set (client-go's fallback, kubelet v1.26's list) too.
  auto listed = http_request(cluster_.proxy_port(), "GET",
                             kPods +
                                 "?fieldSelector=spec.nodeName%3Dedge-node-1&limit=500&"
                                 "resourceVersion=0",
                             {{"User-Agent", kKubelet135}, {"Accept", kKubeletAccept}});
  EXPECT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(list_items(listed), 3u) << listed.body;
}

TEST_F(WatchListNode, ASetNeverSeenGetsAnErrorAndTheClientFallsBackToAList) {
  {
    ReflectorClient kubelet(kubelet_pods(cluster_.proxy_port()));
    ASSERT_TRUE(kubelet.wait_synced(std::chrono::seconds(10)));
    ASSERT_TRUE(cluster_.wait_cache_committed(0));
  }
  reboot_offline();
  // Another node's pods were never listed here: 404, never silence, never an empty list.
  auto options = kubelet_pods(cluster_.proxy_port());
  options.field_selector = "spec.nodeName%3Dedge-node-2";
  ReflectorClient other(options);
  ASSERT_TRUE(eventually([&] { return other.requests().size() >= 2; }, std::chrono::seconds(5)));
  EXPECT_FALSE(other.wait_synced(std::chrono::milliseconds(200)));
  const auto requests = other.requests();
  const auto statuses = other.statuses();
  EXPECT_NE(requests[0].find("sendInitialEvents=true"), std::string::npos);
  EXPECT_EQ(statuses[0], 404);
  EXPECT_EQ(requests[1], "fieldSelector=spec.nodeName%3Dedge-node-2&limit=500&resourceVersion=0");
  EXPECT_EQ(statuses[1], 404);
}

TEST_F(WatchListNode, OfflineAStreamingListSeesTheNodesOwnWritesAfterItsBookmark) {
  {
    ReflectorClient kubelet(kubelet_pods(cluster_.proxy_port()));
    ASSERT_TRUE(kubelet.wait_synced(std::chrono::seconds(10)));
    ASSERT_TRUE(cluster_.wait_cache_committed(0));
  }
  reboot_offline();
  ReflectorClient kubelet(kubelet_pods(cluster_.proxy_port()));
  ASSERT_TRUE(kubelet.wait_synced(std::chrono::seconds(5)));
  // kubelet's status manager patches a pod offline: journaled, and its watch gets the change.
  auto patched =
      http_request(cluster_.proxy_port(), "PATCH", "/api/v1/namespaces/default/pods/web-0/status",
                   {{"User-Agent", kKubelet135}, {"Content-Type", "application/merge-patch+json"}},
                   R"({"status":{"message":"restarted offline"}})");
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_TRUE(kubelet.wait_for(
      [](const auto& objects) {
        auto it = objects.find("default/web-0");
        return it != objects.end() && it->second.find("restarted offline") != std::string::npos;
      },
      std::chrono::seconds(5)));
}

// A node whose control plane is v1.26: the streaming list is refused with 422, client-go falls
// back to list+watch, and the cache has what the list gave it (the hub relays the 422 as is).
class WatchListOldControlPlane : public WatchListNode {
 protected:
  WatchListOldControlPlane() : WatchListNode(old_control_plane()) {}
  static ClusterOptions old_control_plane() {
    ClusterOptions o = demo_cluster();
    o.apiserver_flags.push_back("--watch-list=false");
    return o;
  }
};

TEST_F(WatchListOldControlPlane, TheClientFallsBackAndTheCacheKeepsTheList) {
  {
    ReflectorClient kubelet(kubelet_pods(cluster_.proxy_port()));
    ASSERT_TRUE(kubelet.wait_synced(std::chrono::seconds(10)));
    EXPECT_EQ(kubelet.synced_by(), "list");
    ASSERT_GE(kubelet.statuses().size(), 2u);
    EXPECT_EQ(kubelet.statuses()[0], 422);
    EXPECT_EQ(names(kubelet.objects()), kNodePods);
    ASSERT_TRUE(cluster_.wait_cache_committed(0));
  }
  reboot_offline();
  // Offline the hub answers as a WatchList apiserver: the streaming list from the listed set.
  ReflectorClient kubelet(kubelet_pods(cluster_.proxy_port()));
  ASSERT_TRUE(kubelet.wait_synced(std::chrono::seconds(5)));
  EXPECT_EQ(kubelet.synced_by(), "watch-list");
  EXPECT_EQ(names(kubelet.objects()), kNodePods);
}

}  // namespace
}  // namespace yurthub::test

namespace yurthub::test {
namespace {

// The nodes of an EndpointSlice's endpoints.
std::set<std::string> endpoint_nodes(const std::string& slice) {
  std::set<std::string> nodes;
  auto doc = test_support::parse_json(slice);
  if (!doc.IsObject() || !doc.HasMember("endpoints") || !doc["endpoints"].IsArray()) return nodes;
  for (const auto& ep : doc["endpoints"].GetArray()) nodes.insert(ep["nodeName"].GetString());
  return nodes;
}

class WatchListPool : public WatchListNode {
 protected:
  WatchListPool() : WatchListNode(topology_cluster()) {}
  ReflectorOptions slices(const char* agent) {
    ReflectorOptions o;
    o.port = cluster_.proxy_port();
    o.path = kSlices;
    o.user_agent = agent;
    return o;
  }
};

TEST_F(WatchListPool, ThreeClientsStreamingListsShareOneUpstreamWatchEachFilteredAsItself) {
  ReflectorClient proxy(slices(kKubeProxy135));
  ReflectorClient dns(slices(kCoreDns));
  ReflectorClient cilium(slices("cilium-agent/1.18.0"));
  for (auto* client : {&proxy, &dns, &cilium}) {
    ASSERT_TRUE(client->wait_synced(std::chrono::seconds(15))) << cluster_.hub().log();
    EXPECT_EQ(client->synced_by(), "watch-list");
    EXPECT_EQ(client->objects().size(), 5u);
  }
  // One upstream watch of EndpointSlices for the node: the shared cache's (a list+watch).
  const std::string upstream_watches =
      R"(\] GET /apis/discovery\.k8s\.io/v1/endpointslices\?\S*watch=)";
  EXPECT_EQ(cluster_.apiserver_requests(upstream_watches), 1) << cluster_.apiserver().log();
  EXPECT_EQ(cluster_.apiserver_requests(R"(sendInitialEvents)"), 0) << cluster_.apiserver().log();
  const std::set<std::string> pool_a = {"edge-node-1", "edge-node-2"};
  const std::set<std::string> all = {"edge-node-1", "edge-node-2", "edge-node-3", "edge-node-4"};
  // Each filtered as itself (servicetopology for kube-proxy and coredns), from its first sync.
  EXPECT_EQ(endpoint_nodes(proxy.objects()["default/by-pool-x1"]), pool_a);
  EXPECT_EQ(endpoint_nodes(dns.objects()["default/by-pool-x1"]), pool_a);
  EXPECT_EQ(endpoint_nodes(cilium.objects()["default/by-pool-x1"]), all);
  // And their streams go on as watches: a change reaches each, still one upstream watch.
  auto r = cluster_.kubectl_direct(
      {"label", "endpointslice", "-n", "default", "by-pool-x1", "touched=yes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (auto* client : {&proxy, &dns, &cilium}) {
    EXPECT_TRUE(client->wait_for(
        [](const auto& objects) {
          auto it = objects.find("default/by-pool-x1");
          return it != objects.end() && it->second.find("touched") != std::string::npos;
        },
        std::chrono::seconds(10)));
  }
  EXPECT_EQ(cluster_.apiserver_requests(upstream_watches), 1);
  EXPECT_EQ(proxy.requests().size(), 1u);  // the streaming list's stream is the watch
}

// Offline after a reboot, the shared cache lists from the node cache what it had listed online,
// and a 1.35 kube-proxy's streaming list is answered from that copy, filtered as itself.
TEST_F(WatchListPool, AfterAnOfflineRebootStreamingListsAreServedFromTheSharedCopy) {
  {
    ReflectorClient proxy(slices(kKubeProxy135));
    ASSERT_TRUE(proxy.wait_synced(std::chrono::seconds(15))) << cluster_.hub().log();
    ASSERT_TRUE(cluster_.wait_cache_committed(0));
  }
  reboot_offline();
  ReflectorClient proxy(slices(kKubeProxy135));
  ASSERT_TRUE(proxy.wait_synced(std::chrono::seconds(10))) << cluster_.hub().log();
  EXPECT_EQ(proxy.synced_by(), "watch-list");
  EXPECT_EQ(proxy.objects().size(), 5u);
  EXPECT_EQ(endpoint_nodes(proxy.objects()["default/by-pool-x1"]),
            (std::set<std::string>{"edge-node-1", "edge-node-2"}));
  EXPECT_EQ(endpoint_nodes(proxy.objects()["default/by-host-x1"]),
            std::set<std::string>{"edge-node-1"});
}

}  // namespace
}  // namespace yurthub::test

namespace yurthub::test {
namespace {

// CBOR (client-go's ClientsAllowCBOR/ClientsPreferCBOR, off by default through 1.36): a client
// that takes only CBOR is relayed untouched and never cached (the hub would ask JSON for the
// cache, an answer it cannot read); offline it gets a clear 406, not JSON.
TEST_F(WatchListNode, ACborOnlyClientIsRelayedUncachedAndOfflineGets406) {
  const Headers cbor = {{"User-Agent", kKubelet135}, {"Accept", "application/cbor"}};
  const std::string other_pods = kPods + "?fieldSelector=spec.nodeName%3Dedge-node-2";
  auto online = http_request(cluster_.proxy_port(), "GET", other_pods, cbor);
  EXPECT_EQ(online.status, 200) << online.body;  // the fake answers JSON whatever is asked
  {
    ReflectorClient kubelet(kubelet_pods(cluster_.proxy_port()));
    ASSERT_TRUE(kubelet.wait_synced(std::chrono::seconds(10)));
    ASSERT_TRUE(cluster_.wait_cache_committed(0));
  }
  reboot_offline();
  const Headers json = {{"User-Agent", kKubelet135}, {"Accept", "application/json"}};
  EXPECT_EQ(http_request(cluster_.proxy_port(), "GET", other_pods, json).status, 404);
  auto refused = http_request(cluster_.proxy_port(), "GET",
                              kPods + "?fieldSelector=spec.nodeName%3Dedge-node-1", cbor);
  EXPECT_EQ(refused.status, 406) << refused.body;
  EXPECT_NE(refused.body.find(R"("reason":"NotAcceptable")"), std::string::npos) << refused.body;
  EXPECT_EQ(http_request(cluster_.proxy_port(), "GET",
                         kPods + "?fieldSelector=spec.nodeName%3Dedge-node-1", json)
                .status,
            200);
}

}  // namespace
}  // namespace yurthub::test

namespace yurthub::test {
namespace {

// The decoder the protobuf test reads with, against kube-apiserver v1.26's own bytes.
TEST(ProtobufWatch, ReadsTheApiserversCapture) {
  std::ifstream in(
      std::string(YURTHUB_TESTDATA_DIR) + "/fixtures/apiserver-v1.26/watch-protobuf.stream",
      std::ios::binary);
  std::stringstream raw;
  raw << in.rdbuf();
  auto events = read_protobuf_watch(raw.str());
  ASSERT_TRUE(events);
  ASSERT_FALSE(events->empty());
  EXPECT_EQ(events->front().type, "MODIFIED");
  EXPECT_EQ(events->front().kind, "EndpointSlice");
  EXPECT_EQ(events->front().api_version, "discovery.k8s.io/v1");
  EXPECT_EQ(events->front().name, "web-abc12");
  EXPECT_EQ(events->front().namespace_name, "default");
  EXPECT_EQ(events->front().resource_version, "204");
}

// A streaming list the hub neither caches nor filters passes through as sent, protobuf frames
// included; one it caches is asked as JSON upstream, and its client gets JSON.
TEST_F(WatchListNode, AProtobufStreamingListPassesThroughAndACachedOneIsAskedAsJson) {
  const std::string streaming =
      "?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&"
      "timeoutSeconds=30&watch=true";
  WatchStream agent(cluster_.proxy_port(), "/api/v1/namespaces/default/configmaps" + streaming,
                    Headers{{"User-Agent", "edge-agent/1.0"}, {"Accept", kProtobuf}});
  std::optional<std::vector<ProtobufWatchEvent>> events;
  ASSERT_TRUE(eventually(
      [&] {
        events = read_protobuf_watch(agent.body());
        return events && !events->empty() && events->back().type == "BOOKMARK";
      },
      std::chrono::seconds(10)))
      << agent.status() << " " << agent.body().size();
  EXPECT_EQ(agent.status(), 200);
  ASSERT_GE(events->size(), 2u);
  for (std::size_t i = 0; i + 1 < events->size(); ++i) {
    EXPECT_EQ((*events)[i].type, "ADDED");
    EXPECT_EQ((*events)[i].kind, "ConfigMap");
  }
  const auto& end = events->back();
  EXPECT_EQ(
      end.annotations,
      (std::vector<std::pair<std::string, std::string>>{{"k8s.io/initial-events-end", "true"}}));
  EXPECT_FALSE(end.resource_version.empty());

  WatchStream kubelet(cluster_.proxy_port(),
                      kPods + streaming + "&fieldSelector=spec.nodeName%3Dedge-node-1",
                      Headers{{"User-Agent", kKubelet135}, {"Accept", kProtobuf}});
  ASSERT_TRUE(kubelet.wait_for_events(4, std::chrono::seconds(10))) << kubelet.body();
  for (const auto& line : kubelet.events()) {
    auto doc = test_support::parse_json(line);
    EXPECT_TRUE(doc.IsObject() && doc.HasMember("type")) << line;
  }
  EXPECT_NE(kubelet.events()[3].find("k8s.io/initial-events-end"), std::string::npos);
}

}  // namespace
}  // namespace yurthub::test
