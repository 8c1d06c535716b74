// The offline write journal with the real binaries (docs/offline-semantics.md, "Writes while
// offline"): the scenario of OpenYurt's pod-IP article, where a node reboots without its cloud
// link, kubelet restarts a pod and patches its status, and that status must survive the reboot
// and a kill -9 of the hub and reach the cloud, in order, once the link is back; and an update
// that conflicts with a change the cloud made meanwhile.
#include <signal.h>

#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "test/base/json_test_support.h"
#include "test/integration/cluster.h"
#include "test/integration/http_client.h"

namespace yurthub::test {
namespace {

using ::yurthub::test_support::parse_json;
using ::yurthub::test_support::to_json;

using testing::HasSubstr;

const std::string kNodePods = "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1";
const std::string kPod = "/api/v1/namespaces/default/pods/web-0";
constexpr const char* kUid = "5f0c2f4e-8a51-4c3e-9d62-2b7f0e1a0c01";  // demo-objects.json

// A status patch as kubelet's status manager sends it: a strategic merge patch with the uid
// precondition, $setElementOrder for conditions, and nulls for what went away.
std::string kubelet_status_patch(bool ready, const std::string& state) {
  const std::string status = ready ? "True" : "False";
  return std::string(R"({"metadata":{"uid":")") + kUid +
         R"("},"status":{"$setElementOrder/conditions":[{"type":"Ready"}],)"
         R"("conditions":[{"type":"Ready","status":")" +
         status + R"(","lastTransitionTime":"2026-11-21T11:00:0)" + (ready ? "5" : "1") +
         R"(Z"}],)"
         R"("containerStatuses":[{"name":"web","ready":)" +
         (ready ? "true" : "false") + R"(,"restartCount":1,"started":)" +
         (ready ? "true" : "false") +
         R"(,"image":"nginx:1.25","imageID":"","containerID":"containerd://after-reboot","state":)" +
         state + R"(}],"podIP":"192.0.2.11","podIPs":[{"ip":"192.0.2.11"}]}})";
}

const std::string kCreating = R"({"running":null,"waiting":{"reason":"ContainerCreating"}})";
const std::string kRunning = R"({"running":{"startedAt":"2026-11-21T11:00:04Z"},"waiting":null})";

HttpResponse kubelet_patch(int port, const std::string& target, const std::string& body) {
  return http_request(port, "PATCH", target,
                      {{"User-Agent", kKubeletAgent},
                       {"Content-Type", "application/strategic-merge-patch+json"},
                       {"Accept", "application/json"}},
                      body);
}

// What the checks look at: the pod's Ready condition, its container's state and id, and its IP.
struct PodState {
  std::string ready, container_state, container_id, pod_ip;
  int restarts = -1;
  bool operator==(const PodState&) const = default;
};

PodState pod_state(const rapidjson::Value& pod) {
  PodState s;
  if (!pod.IsObject() || !pod.HasMember("status")) return s;
  const auto& status = pod["status"];
  if (status.HasMember("podIP")) s.pod_ip = status["podIP"].GetString();
  if (status.HasMember("conditions")) {
    for (const auto& c : status["conditions"].GetArray()) {
      if (std::string(c["type"].GetString()) == "Ready") s.ready = c["status"].GetString();
    }
  }
  if (status.HasMember("containerStatuses") && status["containerStatuses"].Size() == 1) {
    const auto& c = status["containerStatuses"][0];
    if (c.HasMember("containerID")) s.container_id = c["containerID"].GetString();
    s.restarts = c["restartCount"].GetInt();
    for (const auto& m : c["state"].GetObject()) s.container_state += m.name.GetString();
  }
  return s;
}

PodState pod_state(const std::string& json) { return pod_state(parse_json(json)); }

const PodState kWritten{"True", "running", "containerd://after-reboot", "192.0.2.11", 1};

// The fake apiserver and the hub, running; the node has read web-0 as kubelet.
class Journal : public testing::Test {
 protected:
  void SetUp() override {
    cluster_.start_apiserver();
    cluster_.start_hub();
    pod_ = kubelet_get(port(), kPod);
    ASSERT_EQ(pod_.status, 200);
  }
  int port() const { return cluster_.proxy_port(); }
  // The hub loses the cloud (its readiness probe fails) while the cloud itself goes on, so the
  // test can change it meanwhile; and gets it back.
  // kube-proxy reads web-0 online with its pod's own token: offline, that token may change its
  // own copy of it (never the node's: docs/security.md).
  void read_pod_with_its_token() {
    const double ops = cluster_.cache_ops();
    ASSERT_EQ(http_request(port(), "GET", kPod,
                           {{"User-Agent", "kube-proxy/v1.26.1"},
                            {"Authorization", "Bearer pod-token-0123456789"}})
                  .status,
              200);
    ASSERT_TRUE(cluster_.wait_cache_committed(ops));
  }
  void set_link(bool up) {
    auto set = cluster_.kubectl_direct(
        {"create", "--raw", std::string("/_fake/ready?ready=") + (up ? "true" : "false"), "-f",
         "-"},
        std::chrono::seconds(20), "{}");
    ASSERT_EQ(set.exit_code, 0) << set.err;
    if (!up) {
      ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(false)) << cluster_.apiserver().log();
    }
  }
  void wait_journal_replayed() {
    ASSERT_TRUE(eventually([&] { return cluster_.metric("node_yurthub_journal_entries") == 0; },
                           std::chrono::seconds(20)))
        << cluster_.hub().log();
  }

  Cluster cluster_{demo_cluster()};
  HttpResponse pod_;
};

TEST_F(Journal, PodStatusWrittenThroughAnOfflineRebootReachesTheCloudInOrder) {
  // Online, kubelet has read web-0 (SetUp) and lists its pods: that is what the node has cached.
  const int port = this->port();
  ASSERT_EQ(kubelet_get(port, kNodePods + "&resourceVersion=0").status, 200);

  // The link drops and the node reboots (the hub restarts offline).
  cluster_.stop_apiserver(SIGKILL);
  ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(false));
  cluster_.hub().signal(SIGTERM);
  cluster_.hub().wait_exit(std::chrono::seconds(10));
  cluster_.start_hub();

  // kubelet restarts the container and reports it: first creating, then running and ready.
  auto first = kubelet_patch(port, kPod + "/status", kubelet_status_patch(false, kCreating));
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(pod_state(first.body),
            (PodState{"False", "waiting", "containerd://after-reboot", "192.0.2.11", 1}));
  WatchStream watch(port, kNodePods + "&watch=true&allowWatchBookmarks=true");
  ASSERT_TRUE(eventually([&] { return watch.status() == 200; }, std::chrono::seconds(5)));
  auto second = kubelet_patch(port, kPod + "/status", kubelet_status_patch(true, kRunning));
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(pod_state(second.body), kWritten);

  // The node's own view has it: get, list, and a MODIFIED event on the open offline watch.
  EXPECT_EQ(pod_state(kubelet_get(port, kPod).body), kWritten);
  auto list = parse_json(kubelet_get(port, kNodePods).body);
  ASSERT_TRUE(list.IsObject() && list.HasMember("items")) << "offline list failed";
  bool listed = false;
  for (const auto& item : list["items"].GetArray()) {
    if (std::string(item["metadata"]["name"].GetString()) == "web-0")
      listed = pod_state(item) == kWritten;
  }
  EXPECT_TRUE(listed);
  ASSERT_TRUE(watch.wait_for_events(1, std::chrono::seconds(5)));
  auto event = parse_json(watch.events()[0]);
  EXPECT_STREQ(event["type"].GetString(), "MODIFIED");
  EXPECT_EQ(pod_state(event["object"]), kWritten);

  // The hub dies hard, and comes back still offline: the journal is on disk.
  cluster_.hub().signal(SIGKILL);
  cluster_.hub().wait_exit(std::chrono::seconds(10));
  cluster_.start_hub();
  auto ls =
      run_command({YURTHUB_BIN, "journal", "ls", "--disk-cache-path=" + cluster_.dir() + "/cache"},
                  std::chrono::seconds(10));
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_THAT(ls.out, HasSubstr("PATCH /api/v1/namespaces/default/pods/web-0/status kubelet"));
  EXPECT_EQ(cluster_.metric("node_yurthub_journal_entries"), 2);

  // The cloud returns: within a health-check interval plus the replay, the cloud's pod has
  // exactly what kubelet wrote, last write last.
  cluster_.start_apiserver();
  wait_journal_replayed();
  auto cloud = cluster_.kubectl_direct({"get", "pod", "web-0", "-o", "json"});
  ASSERT_EQ(cloud.exit_code, 0) << cloud.err;
  EXPECT_EQ(pod_state(cloud.out), kWritten);
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_journal_removed_total{outcome="replayed"})"), 2);
}

TEST_F(Journal, ALabelChangedInTheCloudWhileOfflineSurvivesTheReplayedStatusAndUpdate) {
  const int port = this->port();
  read_pod_with_its_token();
  set_link(false);
  ASSERT_EQ(kubelet_patch(port, kPod + "/status", kubelet_status_patch(true, kRunning)).status,
            200);
  // A whole-object update, based on the pod as the node last saw it.
  auto seen = parse_json(pod_.body);
  seen["metadata"]["labels"].AddMember("edge", "set-offline", seen.GetAllocator());
  const std::string body = to_json(seen);
  // The node's own identity may not update a pod (the apiserver's Node authorizer): refused now,
  // not answered 200 and lost on replay.
  auto as_node =
      http_request(port, "PUT", kPod,
                   {{"User-Agent", kKubeletAgent}, {"Content-Type", "application/json"}}, body);
  EXPECT_EQ(as_node.status, 403) << as_node.body;
  EXPECT_THAT(as_node.body,
              HasSubstr(R"(User \"system:node:edge-node-1\" cannot update resource \"pods\")"));
  // A cache agent with its own token may (the apiserver decides, on replay).
  auto update = http_request(port, "PUT", kPod,
                             {{"User-Agent", "kube-proxy/v1.26.1"},
                              {"Content-Type", "application/json"},
                              {"Authorization", "Bearer pod-token-0123456789"}},
                             body);
  ASSERT_EQ(update.status, 200) << update.body;
  // Meanwhile the cloud changes a label on the same pod (its resourceVersion moves on).
  auto labelled = cluster_.kubectl_direct({"label", "pod", "web-0", "cloud=changed"});
  ASSERT_EQ(labelled.exit_code, 0) << labelled.err;

  set_link(true);
  wait_journal_replayed();
  auto cloud = parse_json(cluster_.kubectl_direct({"get", "pod", "web-0", "-o", "json"}).out);
  ASSERT_TRUE(cloud.IsObject());
  const auto& labels = cloud["metadata"]["labels"];
  EXPECT_STREQ(labels["cloud"].GetString(), "changed");
  EXPECT_STREQ(labels["edge"].GetString(), "set-offline");
  EXPECT_STREQ(labels["app"].GetString(), "web");
  EXPECT_EQ(pod_state(cloud), kWritten);
  EXPECT_EQ(cluster_.metric("node_yurthub_journal_conflicts_merged_total"), 1);
}

// A stale update whose field the cloud changed too is a real conflict: the replay never forces
// it over the cloud's change (that would defeat optimistic concurrency); it is dropped, logged as
// an error and counted.
TEST_F(Journal, AConflictingStaleUpdateIsDroppedAndAlertedNotForced) {
  const int port = this->port();
  read_pod_with_its_token();
  set_link(false);
  auto seen = parse_json(pod_.body);
  seen["metadata"]["labels"]["app"].SetString("set-offline");
  const std::string body = to_json(seen);
  auto update = http_request(port, "PUT", kPod,
                             {{"User-Agent", "kube-proxy/v1.26.1"},
                              {"Content-Type", "application/json"},
                              {"Authorization", "Bearer pod-token-0123456789"}},
                             body);
  ASSERT_EQ(update.status, 200) << update.body;
  ASSERT_EQ(cluster_.kubectl_direct({"label", "--overwrite", "pod", "web-0", "app=set-in-cloud"})
                .exit_code,
            0);
  set_link(true);
  wait_journal_replayed();
  auto cloud = parse_json(cluster_.kubectl_direct({"get", "pod", "web-0", "-o", "json"}).out);
  ASSERT_TRUE(cloud.IsObject());
  EXPECT_STREQ(cloud["metadata"]["labels"]["app"].GetString(), "set-in-cloud");
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_journal_removed_total{outcome="conflict"})"), 1);
  EXPECT_THAT(cluster_.hub().log(), HasSubstr("journal: DROPPED journal entry"));
  EXPECT_THAT(cluster_.hub().log(), HasSubstr("metadata.labels.app"));
}

TEST_F(Journal, DeletesAndOtherCreatesWhileOfflineAre503AndAWriteWaitsForTheReplay) {
  const int port = this->port();
  set_link(false);

  auto deleted = http_request(port, "DELETE", kPod, {{"User-Agent", kKubeletAgent}});
  EXPECT_EQ(deleted.status, 503);
  EXPECT_THAT(deleted.body, HasSubstr("the node is offline"));
  auto created = http_request(port, "POST", "/api/v1/namespaces/default/configmaps",
                              {{"User-Agent", kKubeletAgent}, {"Content-Type", "application/json"}},
                              R"({"metadata":{"name":"x"}})");
  EXPECT_EQ(created.status, 503);
  auto event =
      http_request(port, "POST", "/api/v1/namespaces/default/events",
                   {{"User-Agent", kKubeletAgent}, {"Content-Type", "application/json"}},
                   R"({"metadata":{"name":"web-0.offline","namespace":"default"},)"
                   R"("involvedObject":{"kind":"Pod","name":"web-0","namespace":"default"},)"
                   R"("reason":"Started","message":"started while offline","type":"Normal"})");
  EXPECT_EQ(event.status, 201) << event.body;
  ASSERT_EQ(kubelet_patch(port, kPod + "/status", kubelet_status_patch(true, kRunning)).status,
            200);

  // Back online, a new write to the pod is held until the offline one reached the cloud, so it
  // lands after it.
  set_link(true);
  ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(true, std::chrono::seconds(10)));
  auto later = http_request(
      port, "PATCH", kPod + "/status",
      {{"User-Agent", kKubeletAgent}, {"Content-Type", "application/merge-patch+json"}},
      R"({"status":{"message":"online again",)"
      R"("conditions":[{"type":"Ready","status":"False"}]}})");
  EXPECT_EQ(later.status, 200) << later.body;
  auto cloud = parse_json(cluster_.kubectl_direct({"get", "pod", "web-0", "-o", "json"}).out);
  ASSERT_TRUE(cloud.IsObject());
  // Had the new write overtaken the offline one, the replay would have set Ready back to True.
  PodState expected = kWritten;
  expected.ready = "False";
  EXPECT_EQ(pod_state(cloud), expected);
  EXPECT_STREQ(cloud["status"]["message"].GetString(), "online again");
  wait_journal_replayed();
  auto events = cluster_.kubectl_direct({"get", "events", "-n", "default", "-o", "name"});
  EXPECT_THAT(events.out, HasSubstr("web-0.offline"));
}

TEST_F(Journal, AWriteTheCloudRefusesForGoodLeavesTheJournalAndIsCounted) {
  const int port = this->port();
  set_link(false);
  ASSERT_EQ(kubelet_patch(port, kPod + "/status", kubelet_status_patch(true, kRunning)).status,
            200);
  // The pod is deleted in the cloud meanwhile: the patch can never apply (404).
  ASSERT_EQ(cluster_.kubectl_direct({"delete", "pod", "web-0"}).exit_code, 0);
  set_link(true);
  wait_journal_replayed();
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_journal_removed_total{outcome="rejected"})"), 1);
  EXPECT_THAT(cluster_.hub().log(), HasSubstr("journal: DROPPED journal entry"));
  EXPECT_NE(cluster_.kubectl_direct({"get", "pod", "web-0"}).exit_code, 0);  // not re-created
}

// The replay's own requests carry X-Yurthub-Replay. Any client on the node can send a header:
// one it forges must not mark its write as the journal's (then it would be neither journaled
// offline nor held behind the node's offline writes online).
TEST_F(Journal, AForgedReplayHeaderIsJustAHeader) {
  const int port = this->port();
  set_link(false);
  for (const char* forged : {"1", "2"}) {
    auto patched = http_request(port, "PATCH", kPod + "/status",
                                {{"User-Agent", kKubeletAgent},
                                 {"Content-Type", "application/strategic-merge-patch+json"},
                                 {"X-Yurthub-Replay", forged}},
                                kubelet_status_patch(true, kRunning));
    EXPECT_EQ(patched.status, 200) << patched.body;
  }
  EXPECT_EQ(cluster_.metric("node_yurthub_journal_entries"), 2);
  set_link(true);
  wait_journal_replayed();
  EXPECT_EQ(cluster_.metric(R"(node_yurthub_journal_removed_total{outcome="replayed"})"), 2);
}

}  // namespace
}  // namespace yurthub::test
