// A node that reboots offline and stays offline for a day, with the real binaries: kubelet v1.26's
// periodic loops (docs/offline-semantics.md, "A long offline window": lease every 10 s, node
// status, pod status, the CSI plugin's CSINode gate, projected tokens refreshed at 80 % of their
// TTL and at 24 h, configmaps re-listed, watches that end at their timeout and are started again,
// relists), played round by round while the hub's wall clock is moved on with libfaketime. Each
// answer is the one that keeps kubelet running and its pods in place: no 404 for the CSINode
// (kubelet would create it and exit), no empty or shorter pod list (kubelet would kill the missing
// pods), no placeholder token while the real one is valid. Then the link returns and the cloud gets
// what the node wrote.
//
// The clock: the hub runs under libfaketime (Debian's faketime, installed by scripts/setup.sh),
// which moves only CLOCK_REALTIME (FAKETIME_DONT_FAKE_MONOTONIC=1): the hub's timers and deadlines
// run on steady_clock and are untouched, while what reads the wall clock (the token keeper's
// validity check, log lines, the journal's timestamps) sees the day pass. The offset is read from
// a file at every call (FAKETIME_NO_CACHE=1), so the test moves it while the hub runs.
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/integration/kube_protobuf.h"
#include "test/integration/kubelet_node.h"

namespace yurthub::test {
namespace {

using testing::HasSubstr;

constexpr const char* kFaketimeLib = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
constexpr const char* kFakeOffsetFile = "{dir}/faketime-offset";
const std::string kNodePods = "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1";

ClusterOptions faketime_cluster() {
  ClusterOptions o = demo_cluster();
  std::string asan = "verify_asan_link_order=0";  // libfaketime is preloaded before ASan's runtime
  if (const char* set = std::getenv("ASAN_OPTIONS"); set != nullptr && *set != '\0')
    asan = std::string(set) + ":" + asan;
  o.hub_wrapper = {"/usr/bin/env",
                   std::string("LD_PRELOAD=") + kFaketimeLib,
                   std::string("FAKETIME_TIMESTAMP_FILE=") + kFakeOffsetFile,
                   "FAKETIME_NO_CACHE=1",
                   "FAKETIME_DONT_FAKE_MONOTONIC=1",
                   "ASAN_OPTIONS=" + asan};
  return o;
}

// Run as kubelet v1.26 (list+watch) and v1.35 (streaming lists, client-go's WatchListClient).
class OfflineWindow : public KubeletNode, public testing::WithParamInterface<ClientShape> {
 protected:
  OfflineWindow() : KubeletNode(faketime_cluster()) { play_kubelet(GetParam()); }
  void SetUp() override {
    ASSERT_EQ(::access(kFaketimeLib, R_OK), 0)
        << kFaketimeLib << " is missing: install Debian's faketime (scripts/setup.sh does)";
    set_offline_for(std::chrono::seconds(0));
    KubeletNode::SetUp();
  }
  // Moves the hub's wall clock to `elapsed` after the reboot.
  void set_offline_for(std::chrono::seconds elapsed) {
    std::ofstream(cluster_.expand(kFakeOffsetFile), std::ios::trunc)
        << "+" << elapsed.count() << "s\n";
  }
  // The CSI plugin's gate and tries: a GET every second until 200 or 404; 404 means a create,
  // and a failed create ~25 s later is klog.Fatal.
  void csinode_gate() {
    auto csinode = kubelet("GET", kCSINode);
    ASSERT_EQ(csinode.status, 200) << "kubelet would create its CSINode and exit: " << csinode.body;
  }
  // One round of every loop kubelet runs while it is up, `round` numbering the status change the
  // node and web-0 report in it.
  void one_round(int round);

  // The newest time `yurthub journal ls` shows (its second column, RFC 3339), 0 if none.
  std::time_t latest_journal_entry() {
    auto ls = run_command(
        {YURTHUB_BIN, "journal", "ls", "--disk-cache-path=" + cluster_.dir() + "/cache"},
        std::chrono::seconds(10));
    std::time_t latest = 0;
    std::istringstream lines(ls.out);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream fields(line);
      std::string seq, time;
      fields >> seq >> time;
      std::tm tm{};
      if (::strptime(time.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) continue;
      latest = std::max(latest, ::timegm(&tm));
    }
    return latest;
  }

  std::string lease_uid_;
  std::string pods_rv_;
};

void OfflineWindow::one_round(int round) {
  SCOPED_TRACE("round " + std::to_string(round));
  const std::string n = std::to_string(round);
  // The lease: renewed with the resourceVersion of its last answer (5 tries, then GET again).
  auto renewed = kubelet("PUT", kLease, kProtobuf,
                         lease_body({kNodeName,
                                     "kube-node-lease",
                                     lease_uid_,
                                     lease_rv_,
                                     1795424400,
                                     {},
                                     kNodeName,
                                     40,
                                     1795428100 + round,
                                     0}));
  ASSERT_EQ(renewed.status, 200) << renewed.body;
  lease_rv_ = parse_json(renewed.body)["metadata"]["resourceVersion"].GetString();
  // Node status: a GET from the apiserver's cache, then the patch (on a change, or every 5 min).
  ASSERT_EQ(kubelet("GET", "/api/v1/nodes/edge-node-1?resourceVersion=0").status, 200);
  auto node_status = kubelet(
      "PATCH", "/api/v1/nodes/edge-node-1/status", "application/strategic-merge-patch+json",
      R"({"status":{"$setElementOrder/conditions":[{"type":"Ready"}],"conditions":[{"type":"Ready",)"
      R"("status":"True","reason":"KubeletReady","message":"kubelet is posting ready status, round )" +
          n + R"("}]}})");
  ASSERT_EQ(node_status.status, 200) << node_status.body;
  // The status manager: GET the pod, then PATCH its status with the uid as precondition.
  ASSERT_EQ(kubelet("GET", "/api/v1/namespaces/default/pods/web-0").status, 200);
  auto pod_status =
      kubelet("PATCH", "/api/v1/namespaces/default/pods/web-0/status",
              "application/strategic-merge-patch+json",
              std::string(R"({"metadata":{"uid":")") + kWebUid +
                  R"("},"status":{"phase":"Running","podIP":"192.0.2.11","message":"round )" + n +
                  R"("}})");
  ASSERT_EQ(pod_status.status, 200) << pod_status.body;
  // The projected token volume, remounted every minute: kubelet asks again once the token is
  // past 80 % of its TTL or 24 h old. The real token stays valid for a year (its JWT's exp), so
  // it is the one answered, never a placeholder, though its status says an hour.
  auto token = request_web_token(true);
  ASSERT_EQ(token.status, 201) << token.body;
  EXPECT_EQ(parse_json(token.body)["status"]["token"].GetString(), online_token_)
      << "a placeholder token while the real one is valid";
  // Volumes and env: the configmap's reflector, stopped when idle for 5 min, lists again.
  EXPECT_EQ(
      list_items(list("/api/v1/namespaces/default/configmaps", "metadata.name%3Dkube-root-ca.crt")),
      1u);
  // The informers' watches end at their timeout and are started again from the last
  // resourceVersion; a watch that ends in under a second with nothing in it makes the reflector
  // list again, without a limit and from its last resourceVersion. Neither may lose a pod.
  const auto started = std::chrono::steady_clock::now();
  auto watch = kubelet("GET", kNodePods + "&allowWatchBookmarks=true&resourceVersion=" + pods_rv_ +
                                  "&timeoutSeconds=1&watch=true");
  EXPECT_EQ(watch.status, 200);
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(900))
      << "a watch this short makes the reflector re-list";
  EXPECT_THAT(watch.body, testing::Not(HasSubstr(R"("type":"DELETED")")));
  auto relist = kubelet("GET", kNodePods + "&resourceVersion=" + pods_rv_);
  ASSERT_EQ(relist.status, 200);
  EXPECT_EQ(list_items(relist), 3u) << "a pod missing from a relist is killed";
  EXPECT_EQ(list_items(list("/api/v1/nodes", "metadata.name%3Dedge-node-1")), 1u);
  EXPECT_EQ(list("/api/v1/services").status, 200);
  EXPECT_EQ(list("/apis/storage.k8s.io/v1/csidrivers").status, 200);
  // Events of the round (a container's probe, an image): journaled, bounded.
  EXPECT_EQ(kubelet("POST", "/api/v1/namespaces/default/events", kProtobuf,
                    named_object_body("v1", "Event", "web-0.round-" + n, "default"))
                .status,
            201);
}

TEST_P(OfflineWindow, ADayOfflineAfterARebootKeepsKubeletUpAndItsPods) {
  first_start_online();
  reboot_offline();

  // kubelet starts again: its node, its pods, the CSI plugin's gate, its lease.
  auto pods = list("/api/v1/pods", "spec.nodeName%3Dedge-node-1");
  ASSERT_EQ(list_items(pods), 3u);
  pods_rv_ = parse_json(pods.body)["metadata"]["resourceVersion"].GetString();
  csinode_gate();
  auto lease = kubelet("GET", kLease);
  ASSERT_EQ(lease.status, 200) << lease.body;
  lease_uid_ = parse_json(lease.body)["metadata"]["uid"].GetString();
  lease_rv_ = parse_json(lease.body)["metadata"]["resourceVersion"].GetString();

  // The day: rounds at moments where kubelet's behaviour changes. 50 min: the token's first
  // refresh (80 % of 3607 s); 2 h: its status expiration long past; 25 h: the 24 h refresh.
  using std::chrono::hours;
  using std::chrono::minutes;
  const std::chrono::seconds moments[] = {minutes(1), minutes(10), minutes(50), hours(2),
                                          hours(25)};
  int round = 0;
  for (auto moment : moments) {
    set_offline_for(moment);
    csinode_gate();  // a kubelet that restarted again (it may, any time)
    one_round(++round);
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_offline_token_requests_total{answer="fake"})"), -1)
      << cluster_.hub().log();
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_offline_token_requests_total{answer="kept"})"), round);
  EXPECT_TRUE(cluster_.hub().running());
  // The hub's wall clock did move: the journal dates its last entries a day on.
  EXPECT_GT(latest_journal_entry(), std::time(nullptr) + 24 * 3600)
      << run_command(
             {YURTHUB_BIN, "journal", "ls", "--disk-cache-path=" + cluster_.dir() + "/cache"},
             std::chrono::seconds(10))
             .out;

  // The link returns: every status the node reported reaches the cloud, in order, the last
  // last; the lease never did (a stale heartbeat means nothing upstream).
  link_returns();
  ASSERT_TRUE(eventually([&] { return cluster_.metric("node_yurthub_journal_entries") == 0; },
                         std::chrono::seconds(30)))
      << cluster_.hub().log();
  // The node's and web-0's status patches; the events are protobuf, which the fake apiserver
  // cannot read (415: dropped with an alert; the real one takes them).
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_journal_removed_total{outcome="replayed"})"),
            2 * round);
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_journal_removed_total{outcome="rejected"})"), round);
  auto web = cluster_.kubectl_direct({"get", "pod", "web-0", "-n", "default", "-o", "json"});
  EXPECT_THAT(web.out, HasSubstr(R"("message": "round )" + std::to_string(round) + "\""));
  auto node = cluster_.kubectl_direct({"get", "node", "edge-node-1", "-o", "json"});
  EXPECT_THAT(node.out, HasSubstr("ready status, round " + std::to_string(round)));
}

INSTANTIATE_TEST_SUITE_P(Kubelet, OfflineWindow,
                         testing::Values(ClientShape::ListWatch, ClientShape::WatchList),
                         [](const auto& info) { return shape_name(info.param); });

}  // namespace
}  // namespace yurthub::test
