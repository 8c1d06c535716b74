// Offline writes end to end through a real LMDB store: what kubelet's patches, updates, lease
// renewals and creates get back while the node is offline, what the cache then holds, and which
// writes the node may make (cache/offline_writes.h). The journal's side is in
// offline_writes_journal_test.cc.
#include <gtest/gtest.h>

#include "test/cache/offline_writes_fixture.h"

namespace yurthub::cache {
namespace {

using namespace yurthub::cache::test_support;

TEST_F(OfflineWritesTest, APodStatusPatchIsAppliedJournaledAndShownToOfflineWatches) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod, "coredns/1.11");  // another component
  int wakes = 0;
  auto watch = events_.subscribe("kubelet", "", "v1", "pods", "", [&] { ++wakes; });

  auto out =
      write("PATCH", "/api/v1/namespaces/default/pods/web-0/status", "application/merge-patch+json",
            R"({"metadata":{"uid":"u-1"},"status":{"phase":"Running","podIP":"10.0.0.5"}})");
  ASSERT_EQ(out.status, 200u) << out.body;
  auto answered = parse(out.body);
  EXPECT_STREQ(answered["status"]["phase"].GetString(), "Running");
  EXPECT_STREQ(answered["metadata"]["resourceVersion"].GetString(),
               "40");  // only the cloud bumps it

  // Both components' copies changed; a later offline get sees it.
  EXPECT_STREQ(parse(kubelet_pod())["status"]["phase"].GetString(), "Running");
  auto coredns =
      policy_.identity(request("GET", "/api/v1/namespaces/default/pods/web-0", "coredns/1.11"));
  EXPECT_STREQ(
      parse(*object_json(coredns->key(), "default", "web-0"))["status"]["phase"].GetString(),
      "Running");

  auto entries = journaled();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].method, "PATCH");
  EXPECT_EQ(entries[0].target, "/api/v1/namespaces/default/pods/web-0/status");
  EXPECT_EQ(entries[0].component, "kubelet");
  EXPECT_EQ(entries[0].base_resource_version, 40u);
  EXPECT_TRUE(journal_->pending("/v1/pods/default/web-0"));

  auto changes = watch->take();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(wakes, 1);
  EXPECT_NE(changes[0].json.find("Running"), std::string::npos);
}

// A cache agent writing under its own token (the apiserver decides what it may do): the hub
// applies the write as the apiserver's registry would.
constexpr const char* kOperator = "Bearer operator-token";

TEST_F(OfflineWritesTest, AStatusWriteChangesOnlyStatusAndAnObjectWriteKeepsIt) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod, "kubelet/v1.32.4", kOperator);
  auto status =
      write("PATCH", "/api/v1/namespaces/default/pods/web-0/status", "application/merge-patch+json",
            R"({"metadata":{"labels":{"app":"db"}},"status":{"phase":"Running"}})",
            "kube-proxy/v1.26.1", kOperator);
  ASSERT_EQ(status.status, 200u) << status.body;
  auto pod = parse(kubelet_pod(kOperator));
  EXPECT_STREQ(pod["metadata"]["labels"]["app"].GetString(), "web");
  EXPECT_STREQ(pod["status"]["phase"].GetString(), "Running");

  auto labels =
      write("PATCH", "/api/v1/namespaces/default/pods/web-0", "application/merge-patch+json",
            R"({"metadata":{"labels":{"app":"db"}},"status":{"phase":"Failed"}})",
            "kube-proxy/v1.26.1", kOperator);
  ASSERT_EQ(labels.status, 200u) << labels.body;
  pod = parse(kubelet_pod(kOperator));
  EXPECT_STREQ(pod["metadata"]["labels"]["app"].GetString(), "db");
  EXPECT_STREQ(pod["status"]["phase"].GetString(), "Running");
  EXPECT_EQ(journaled().size(), 2u);
}

// A caller's own token is never the node: offline its write changes only what that token read
// online, and a token the apiserver never accepted on this node changes nothing (issue 30: a
// made-up token once switched every check off and rewrote kubelet's pod).
TEST_F(OfflineWritesTest, ACallersTokenWritesOnlyItsOwnCopiesAndAnUnknownOneNothing) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  const std::string rewrite =
      R"({"spec":{"containers":[{"name":"c","image":"attacker.example/rootkit:latest"}]}})";
  auto forged =
      write("PATCH", "/api/v1/namespaces/default/pods/web-0", "application/merge-patch+json",
            rewrite, "kubelet/v1.32.4", "Bearer not-a-real-token");
  EXPECT_EQ(forged.status, 503u) << forged.body;
  EXPECT_NE(forged.body.find("cannot verify this bearer token"), std::string::npos);
  // Accepted online, but it never read web-0: not cached for it.
  cache_get("/api/v1/namespaces/default/configmaps/c",
            R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"default",)"
            R"("resourceVersion":"3"}})",
            "kubelet/v1.32.4", kOperator);
  EXPECT_EQ(write("PATCH", "/api/v1/namespaces/default/pods/web-0", "application/merge-patch+json",
                  rewrite, "kubelet/v1.32.4", kOperator)
                .status,
            503u);
  EXPECT_EQ(kubelet_pod().find("attacker"), std::string::npos);
  EXPECT_TRUE(journaled().empty());
  EXPECT_NE(journal_metrics().find(R"(node_yurthub_journal_refused_total{reason="unverified"} 1)"),
            std::string::npos);
}

// The node's identity may change a pod's status only, never its labels: the apiserver would
// refuse, so the hub refuses now rather than answer 200 and lose the write on replay.
TEST_F(OfflineWritesTest, TheNodeMayNotChangeAPodsLabelsOffline) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  auto object = write("PATCH", "/api/v1/namespaces/default/pods/web-0",
                      "application/merge-patch+json", R"({"metadata":{"labels":{"app":"db"}}})");
  EXPECT_EQ(object.status, 403u);
  EXPECT_EQ(
      object.body,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods )"
      R"(\"web-0\" is forbidden: User \"system:node:edge-node-1\" cannot patch resource )"
      R"(\"pods\" in API group \"\" in the namespace \"default\"","reason":"Forbidden",)"
      R"("details":{"name":"web-0","kind":"pods"},"code":403})");
  auto status =
      write("PATCH", "/api/v1/namespaces/default/pods/web-0/status", "application/merge-patch+json",
            R"({"metadata":{"labels":{"app":"db"}},"status":{"phase":"Running"}})");
  EXPECT_EQ(status.status, 403u);
  EXPECT_NE(status.body.find("cannot update labels through pod status"), std::string::npos)
      << status.body;
  EXPECT_TRUE(journaled().empty());
  auto pod = parse(kubelet_pod());
  EXPECT_STREQ(pod["metadata"]["labels"]["app"].GetString(), "web");
  EXPECT_STREQ(pod["status"]["phase"].GetString(), "Pending");
  EXPECT_NE(journal_metrics().find(R"(node_yurthub_journal_refused_total{reason="forbidden"} 2)"),
            std::string::npos);
}

TEST_F(OfflineWritesTest, PatchesTheHubCannotApplyAreRefusedAndNotJournaled) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod, "kubelet/v1.32.4", kOperator);
  struct Case {
    const char* method;
    std::string target, type, body;
    unsigned code;
  } cases[] = {
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/json-patch+json",
       R"([{"op":"test","path":"/status/phase","value":"Running"}])", 422},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/apply-patch+yaml",
       "status: {}", 415},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/merge-patch+json",
       "{not json", 400},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0/status", "application/merge-patch+json",
       R"({"metadata":{"uid":"someone-else"}})", 409},
      {"PUT", "/api/v1/namespaces/default/pods/web-0", "application/json",
       R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default","resourceVersion":"39"}})",
       409},
      {"PUT", "/api/v1/namespaces/default/pods/web-0", "application/vnd.kubernetes.protobuf",
       std::string("k8s\0", 4), 415},
      {"PATCH", "/api/v1/namespaces/default/pods/web-1", "application/merge-patch+json", "{}", 503},
      // Untrusted JSON: nesting that once overflowed the writer's stack, the apiserver's limits.
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/merge-patch+json",
       std::string(1u << 20, '['), 400},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/json-patch+json",
       many_ops(10001, [](int) { return std::string(kTestOp); }), 413},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/json-patch+json",
       many_ops(64, [](int i) { return kCopyLabels + std::to_string(i) + R"("})"; }), 422},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.type + " " + c.body.substr(0, 100));
    // Object writes come with an operator's token (the node may not write a pod itself).
    const bool status_write = c.target.ends_with("/status");
    auto out =
        write(c.method, c.target, c.type, c.body, "kubelet/v1.32.4", status_write ? "" : kOperator);
    EXPECT_EQ(out.status, c.code) << out.body;
    EXPECT_NE(out.body.find("\"kind\":\"Status\""), std::string::npos);
  }
  EXPECT_TRUE(journaled().empty());
  EXPECT_STREQ(parse(kubelet_pod())["status"]["phase"].GetString(), "Pending");
  EXPECT_STREQ(parse(kubelet_pod(kOperator))["status"]["phase"].GetString(), "Pending");
}

TEST_F(OfflineWritesTest, AnUpdateAtTheCachedVersionIsKeptWithItsBaseForTheThreeWayMerge) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod, "kubelet/v1.32.4", kOperator);
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);  // the node's own copy
  auto out = write(
      "PUT", "/api/v1/namespaces/default/pods/web-0", "application/json",
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default",)"
      R"("uid":"u-1","resourceVersion":"40","labels":{"app":"web","tier":"x"}},"spec":{"nodeName":"edge-node-1"}})",
      "kube-proxy/v1.26.1", kOperator);
  ASSERT_EQ(out.status, 200u) << out.body;
  EXPECT_STREQ(parse(kubelet_pod(kOperator))["metadata"]["labels"]["tier"].GetString(), "x");
  const auto node_copy = parse(kubelet_pod());
  ASSERT_TRUE(node_copy.IsObject()) << "the node's copy is still cached";
  EXPECT_FALSE(node_copy["metadata"]["labels"].HasMember("tier")) << "the node's copy";
  auto entries = journaled();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].method, "PUT");
  EXPECT_STREQ(parse(entries[0].base)["metadata"]["resourceVersion"].GetString(), "40");
}

TEST_F(OfflineWritesTest, LeaseRenewalsAreAnsweredLocallyAndNeverJournaled) {
  const std::string target =
      "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-node-1";
  cache_get(target, kLease);
  std::string renewed = kLease;
  renewed.replace(renewed.find("2026-01-01"), 10, "2026-02-02");
  auto json = write("PUT", target, "application/json", renewed);
  ASSERT_EQ(json.status, 200u) << json.body;
  EXPECT_NE(json.body.find("2026-02-02"), std::string::npos);
  EXPECT_TRUE(journaled().empty());
}

// kubelet renews its lease with a protobuf PUT (test/testdata/protobuf/lease-update.pb, made by
// protoc): its spec is applied to the cached lease, its resourceVersion is the precondition.
TEST_F(OfflineWritesTest, AProtobufLeaseRenewalIsAppliedToTheCachedLease) {
  set_limits(JournalLimits{}, "edge-1");
  const std::string target =
      "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-1";
  cache_get(
      target,
      R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"edge-1",)"
      R"("namespace":"kube-node-lease","uid":"c1b6f0a2-3d4e-4f5a-9b8c-7d6e5f4a3b2c",)"
      R"("resourceVersion":"1234"},"spec":{"holderIdentity":"edge-1","leaseDurationSeconds":40,)"
      R"("renewTime":"2026-11-23T09:59:55.000000Z"}})");
  auto renewed = write("PUT", target, "application/vnd.kubernetes.protobuf",
                       protobuf_fixture("lease-update.pb"));
  ASSERT_EQ(renewed.status, 200u) << renewed.body;
  auto lease = parse(renewed.body);
  EXPECT_STREQ(lease["spec"]["renewTime"].GetString(), "2026-11-23T10:00:05.123456Z");
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"].GetInt(), 40);
  EXPECT_STREQ(lease["metadata"]["resourceVersion"].GetString(), "1234");
  auto id = policy_.identity(request("GET", target));
  EXPECT_NE(object_json(id->key(), "kube-node-lease", "edge-1")->find("10:00:05.123456Z"),
            std::string::npos);
  EXPECT_TRUE(journaled().empty());

  // A renewal based on another resourceVersion is a conflict, as the apiserver says; garbage is
  // 400.
  cache_get(target,
            R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"edge-1",)"
            R"("namespace":"kube-node-lease","resourceVersion":"1300"},"spec":{}})");
  EXPECT_EQ(write("PUT", target, "application/vnd.kubernetes.protobuf",
                  protobuf_fixture("lease-update.pb"))
                .status,
            409u);
  EXPECT_EQ(
      write("PUT", target, "application/vnd.kubernetes.protobuf", std::string("k8s\0\n", 5)).status,
      400u);
}

TEST_F(OfflineWritesTest, KubeletsCreatesAtStartAnsweredFromTheCache) {
  set_limits(JournalLimits{}, "edge-1");
  const std::string leases = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
  // No lease cached: kubelet's create is kept locally, then it exists.
  auto created = write("POST", leases, "application/vnd.kubernetes.protobuf",
                       protobuf_fixture("lease-create.pb"));
  ASSERT_EQ(created.status, 201u) << created.body;
  auto lease = parse(created.body);
  EXPECT_STREQ(lease["kind"].GetString(), "Lease");
  EXPECT_STREQ(lease["metadata"]["namespace"].GetString(), "kube-node-lease");
  EXPECT_STREQ(lease["metadata"]["ownerReferences"][0]["kind"].GetString(), "Node");
  EXPECT_STREQ(lease["spec"]["renewTime"].GetString(), "2026-11-23T09:00:00.250000Z");
  auto again = write("POST", leases, "application/vnd.kubernetes.protobuf",
                     protobuf_fixture("lease-create.pb"));
  EXPECT_EQ(again.status, 409u);
  EXPECT_NE(again.body.find(R"(leases.coordination.k8s.io \"edge-1\" already exists)"),
            std::string::npos)
      << again.body;

  // The node: 409 when cached (kubelet then gets and patches it), 503 when the hub cannot know.
  EXPECT_EQ(write("POST", "/api/v1/nodes", "application/vnd.kubernetes.protobuf",
                  protobuf_fixture("node-create.pb"))
                .status,
            503u);
  cache_get(
      "/api/v1/nodes/edge-1",
      R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"edge-1","resourceVersion":"7"}})");
  auto node = write("POST", "/api/v1/nodes", "application/vnd.kubernetes.protobuf",
                    protobuf_fixture("node-create.pb"));
  EXPECT_EQ(node.status, 409u);
  EXPECT_NE(
      node.body.find(
          R"("reason":"AlreadyExists","details":{"name":"edge-1","kind":"nodes"},"code":409)"),
      std::string::npos)
      << node.body;
  cache_get(
      "/apis/storage.k8s.io/v1/csinodes/edge-1",
      R"({"kind":"CSINode","apiVersion":"storage.k8s.io/v1","metadata":{"name":"edge-1","resourceVersion":"8"}})");
  EXPECT_EQ(write("POST", "/apis/storage.k8s.io/v1/csinodes", "application/vnd.kubernetes.protobuf",
                  protobuf_fixture("csinode-create.pb"))
                .status,
            409u);
  EXPECT_TRUE(journaled().empty());
}

// kubelet's CSI plugin reads its CSINode at start and exits when it can neither read nor create
// it. A cache that has none (a hub upgraded from a version that kept no write answers) keeps
// kubelet's create locally; it is never journaled: a registered node has one in the cloud.
TEST_F(OfflineWritesTest, ACSINodeCreateTheCacheCannotAnswerIsKeptLocally) {
  set_limits(JournalLimits{}, "edge-1");
  const std::string csinodes = "/apis/storage.k8s.io/v1/csinodes";
  auto created = write("POST", csinodes, "application/vnd.kubernetes.protobuf",
                       protobuf_fixture("csinode-create.pb"));
  ASSERT_EQ(created.status, 201u) << created.body;
  auto csinode = parse(created.body);
  EXPECT_STREQ(csinode["kind"].GetString(), "CSINode");
  EXPECT_STREQ(csinode["apiVersion"].GetString(), "storage.k8s.io/v1");
  EXPECT_FALSE(csinode["metadata"].HasMember("namespace"));
  EXPECT_STREQ(csinode["metadata"]["resourceVersion"].GetString(), "1");
  EXPECT_STREQ(csinode["metadata"]["ownerReferences"][0]["kind"].GetString(), "Node");
  EXPECT_TRUE(csinode["spec"]["drivers"].IsNull());
  auto id = policy_.identity(request("GET", csinodes + "/edge-1"));
  EXPECT_EQ(object_json(id->key(), "", "edge-1"), created.body);
  EXPECT_EQ(write("POST", csinodes, "application/vnd.kubernetes.protobuf",
                  protobuf_fixture("csinode-create.pb"))
                .status,
            409u);
  // Another node's CSINode is NodeRestriction's 403, never kept.
  EXPECT_EQ(write("POST", csinodes, "application/json",
                  R"({"metadata":{"name":"edge-2"},"spec":{"drivers":null}})")
                .status,
            403u);
  EXPECT_TRUE(journaled().empty());
}

}  // namespace
}  // namespace yurthub::cache
