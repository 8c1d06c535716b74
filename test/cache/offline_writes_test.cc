// Offline writes end to end through a real LMDB store: what kubelet's patches, updates, lease
// renewals and events get back while the node is offline, what the cache then holds, and what
// the journal keeps for replay (cache/offline_writes.h, cache/journal.h).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "cache/cache_policy.h"
#include "cache/journal.h"
#include "cache/local_events.h"
#include "cache/offline_writes.h"
#include "cache/response_taps.h"
#include "test/cache/cache_test_support.h"

namespace yurthub::cache {
namespace {

using namespace yurthub::cache::test_support;

constexpr const char* kPod =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default",)"
    R"("uid":"u-1","resourceVersion":"40","labels":{"app":"web"}},"spec":{"nodeName":"edge-node-1"},)"
    R"("status":{"phase":"Pending","podIP":"10.0.0.5"}})";
constexpr const char* kLease =
    R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"edge-node-1",)"
    R"("namespace":"kube-node-lease","uid":"l-1","resourceVersion":"41"},)"
    R"("spec":{"holderIdentity":"edge-node-1","renewTime":"2026-01-01T00:00:00.000000Z"}})";

rapidjson::Document parse(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  return doc;
}

hub::RequestInfo request(const char* method, const std::string& target, const char* agent = "kubelet/v1.32.4") {
  return hub::classify_request(method, target, agent);
}

constexpr const char* kTestOp = R"({"op":"test","path":"/kind","value":"Pod"})";
// Each copies metadata.labels into itself, doubling it.
const std::string kCopyLabels = R"({"op":"copy","from":"/metadata/labels","path":"/metadata/labels/l)";

// A JSON patch of `count` operations, `op(i)` each.
template <class Op>
std::string many_ops(int count, Op op) {
  std::string out = "[";
  for (int i = 0; i < count; ++i) out += (i ? "," : "") + op(i);
  return out + "]";
}

class OfflineWritesTest : public StoreFixture {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    set_limits(JournalLimits{});
  }
  void set_limits(JournalLimits limits) {
    writes_.reset();
    journal_.reset();
    journal_registry_ = std::make_unique<hub::MetricsRegistry>();
    journal_ = std::make_unique<Journal>(*journal_registry_, limits);
    writes_ = std::make_unique<OfflineWrites>(*writer_, *journal_, events_, policy_, *metrics_);
  }
  std::string journal_metrics() { return journal_registry_->render(); }
  void TearDown() override {
    writes_.reset();
    StoreFixture::TearDown();
  }
  // Caches `json` as the answer to a GET of `target` by `agent`.
  void cache_get(const std::string& target, const std::string& json, const char* agent = "kubelet/v1.32.4") {
    auto id = policy_.identity(request("GET", target, agent));
    ASSERT_TRUE(id);
    auto tap = make_object_tap(*writer_, *metrics_, *id);
    tap->body(json);
    tap->end(true);
    writer_->flush();
  }
  RecordingWriter write(const char* method, const std::string& target, std::string content_type,
                        std::string body, const char* agent = "kubelet/v1.32.4") {
    auto info = request(method, target, agent);
    EXPECT_TRUE(writes_->handles(info)) << method << " " << target;
    hub::OfflineWrite w{method, target, content_type, agent, "", std::move(body)};
    RecordingWriter out;
    run(writes_->serve(info, w, out));
    return out;
  }
  std::vector<JournalEntry> journaled() {
    std::vector<JournalEntry> out;
    store_->read()->scan_journal([&](std::uint64_t seq, std::string_view bytes) {
      auto entry = decode_journal_entry(seq, bytes);
      EXPECT_TRUE(entry) << bytes;
      if (entry) out.push_back(*entry);
      return true;
    });
    return out;
  }
  std::string kubelet_pod() {
    auto id = policy_.identity(request("GET", "/api/v1/namespaces/default/pods/web-0"));
    return object_json(id->key(), "default", "web-0").value_or("");
  }

  std::unique_ptr<hub::MetricsRegistry> journal_registry_;
  CachePolicy policy_;
  LocalEvents events_;
  std::unique_ptr<Journal> journal_;
  std::unique_ptr<OfflineWrites> writes_;
};

TEST_F(OfflineWritesTest, APodStatusPatchIsAppliedJournaledAndShownToOfflineWatches) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod, "coredns/1.11");  // another component
  int wakes = 0;
  auto watch = events_.subscribe("kubelet", "", "v1", "pods", "", [&] { ++wakes; });

  auto out = write("PATCH", "/api/v1/namespaces/default/pods/web-0/status",
                   "application/merge-patch+json",
                   R"({"metadata":{"uid":"u-1"},"status":{"phase":"Running","podIP":"10.0.0.5"}})");
  ASSERT_EQ(out.status, 200u) << out.body;
  auto answered = parse(out.body);
  EXPECT_STREQ(answered["status"]["phase"].GetString(), "Running");
  EXPECT_STREQ(answered["metadata"]["resourceVersion"].GetString(), "40");  // only the cloud bumps it

  // Both components' copies changed; a later offline get sees it.
  EXPECT_STREQ(parse(kubelet_pod())["status"]["phase"].GetString(), "Running");
  auto coredns = policy_.identity(request("GET", "/api/v1/namespaces/default/pods/web-0", "coredns/1.11"));
  EXPECT_STREQ(parse(*object_json(coredns->key(), "default", "web-0"))["status"]["phase"].GetString(), "Running");

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

TEST_F(OfflineWritesTest, AStatusWriteChangesOnlyStatusAndAnObjectWriteKeepsIt) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  auto status = write("PATCH", "/api/v1/namespaces/default/pods/web-0/status", "application/merge-patch+json",
                      R"({"metadata":{"labels":{"app":"db"}},"status":{"phase":"Running"}})");
  ASSERT_EQ(status.status, 200u) << status.body;
  auto pod = parse(kubelet_pod());
  EXPECT_STREQ(pod["metadata"]["labels"]["app"].GetString(), "web");
  EXPECT_STREQ(pod["status"]["phase"].GetString(), "Running");

  auto labels = write("PATCH", "/api/v1/namespaces/default/pods/web-0", "application/merge-patch+json",
                      R"({"metadata":{"labels":{"app":"db"}},"status":{"phase":"Failed"}})");
  ASSERT_EQ(labels.status, 200u) << labels.body;
  pod = parse(kubelet_pod());
  EXPECT_STREQ(pod["metadata"]["labels"]["app"].GetString(), "db");
  EXPECT_STREQ(pod["status"]["phase"].GetString(), "Running");
  EXPECT_EQ(journaled().size(), 2u);
}

TEST_F(OfflineWritesTest, PatchesTheHubCannotApplyAreRefusedAndNotJournaled) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  struct Case {
    const char* method;
    std::string target, type, body;
    unsigned code;
  } cases[] = {
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/json-patch+json",
       R"([{"op":"test","path":"/status/phase","value":"Running"}])", 422},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/apply-patch+yaml", "status: {}", 415},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "application/merge-patch+json", "{not json", 400},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0/status", "application/merge-patch+json",
       R"({"metadata":{"uid":"someone-else"}})", 409},
      {"PUT", "/api/v1/namespaces/default/pods/web-0", "application/json",
       R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default","resourceVersion":"39"}})", 409},
      {"PUT", "/api/v1/namespaces/default/pods/web-0", "application/vnd.kubernetes.protobuf", "k8s\0", 415},
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
    auto out = write(c.method, c.target, c.type, c.body);
    EXPECT_EQ(out.status, c.code) << out.body;
    EXPECT_NE(out.body.find("\"kind\":\"Status\""), std::string::npos);
  }
  EXPECT_TRUE(journaled().empty());
  EXPECT_STREQ(parse(kubelet_pod())["status"]["phase"].GetString(), "Pending");
}

TEST_F(OfflineWritesTest, AnUpdateAtTheCachedVersionIsKeptWithItsBaseForTheThreeWayMerge) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  auto out = write("PUT", "/api/v1/namespaces/default/pods/web-0", "application/json",
                   R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default",)"
                   R"("uid":"u-1","resourceVersion":"40","labels":{"app":"web","tier":"x"}},"spec":{"nodeName":"edge-node-1"}})");
  ASSERT_EQ(out.status, 200u) << out.body;
  EXPECT_STREQ(parse(kubelet_pod())["metadata"]["labels"]["tier"].GetString(), "x");
  auto entries = journaled();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].method, "PUT");
  EXPECT_STREQ(parse(entries[0].base)["metadata"]["resourceVersion"].GetString(), "40");
}

TEST_F(OfflineWritesTest, LeaseRenewalsAreAnsweredLocallyAndNeverJournaled) {
  const std::string target = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-node-1";
  cache_get(target, kLease);
  std::string renewed = kLease;
  renewed.replace(renewed.find("2026-01-01"), 10, "2026-02-02");
  auto json = write("PUT", target, "application/json", renewed);
  ASSERT_EQ(json.status, 200u) << json.body;
  EXPECT_NE(json.body.find("2026-02-02"), std::string::npos);
  // kubelet sends leases as protobuf, which the hub cannot read: the cached lease comes back.
  auto proto = write("PUT", target, "application/vnd.kubernetes.protobuf", std::string("k8s\0\n", 5));
  ASSERT_EQ(proto.status, 200u) << proto.body;
  EXPECT_NE(proto.body.find("2026-02-02"), std::string::npos);
  EXPECT_TRUE(journaled().empty());
}

TEST_F(OfflineWritesTest, EventsAreJournaledUpToTheirBoundOldestDroppedFirst) {
  set_limits(JournalLimits{10000, 64u << 20, 2});
  for (const char* name : {"a", "b", "c"}) {
    auto out = write("POST", "/api/v1/namespaces/default/events", "application/json",
                     std::string(R"({"kind":"Event","apiVersion":"v1","metadata":{"name":")") + name +
                         R"(","namespace":"default"},"reason":"Started"})");
    EXPECT_EQ(out.status, 201u) << out.body;
  }
  auto generated = write("POST", "/api/v1/namespaces/default/events", "application/json",
                         R"({"metadata":{"generateName":"web-0.","namespace":"default"},"reason":"Pulled"})");
  EXPECT_EQ(generated.status, 201u);
  EXPECT_NE(parse(generated.body)["metadata"]["name"].GetString(), std::string("web-0."));
  auto entries = journaled();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_NE(entries[0].body.find("\"c\""), std::string::npos);
  EXPECT_NE(journal_metrics().find("node_yurthub_journal_removed_total{outcome=\"event_bound\"} 2"),
            std::string::npos)
      << journal_metrics();
}

TEST_F(OfflineWritesTest, AFullJournalRefusesWithA503AndKeepsWhatItHas) {
  set_limits(JournalLimits{1, 64u << 20, 1000});
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  const std::string target = "/api/v1/namespaces/default/pods/web-0/status";
  EXPECT_EQ(write("PATCH", target, "application/merge-patch+json", R"({"status":{"phase":"Running"}})").status, 200u);
  auto full = write("PATCH", target, "application/merge-patch+json", R"({"status":{"phase":"Failed"}})");
  EXPECT_EQ(full.status, 503u);
  EXPECT_NE(full.body.find("journal is full"), std::string::npos) << full.body;
  EXPECT_STREQ(parse(kubelet_pod())["status"]["phase"].GetString(), "Running");
  EXPECT_NE(journal_metrics().find("node_yurthub_journal_refused_total{reason=\"full\"} 1"),
            std::string::npos)
      << journal_metrics();
}

TEST_F(OfflineWritesTest, TheJournalIsStillThereAfterARestart) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  write("PATCH", "/api/v1/namespaces/default/pods/web-0/status", "application/merge-patch+json",
        R"({"status":{"phase":"Running"}})");
  hub::MetricsRegistry fresh;
  Journal reloaded(fresh, JournalLimits{});
  reloaded.load(*store_->read());
  EXPECT_EQ(reloaded.size(), 1u);
  EXPECT_TRUE(reloaded.pending("/v1/pods/default/web-0"));
  EXPECT_FALSE(reloaded.pending("/v1/pods/default/web-1"));
}

TEST(JournalEntryTest, EncodesAndDecodesEveryField) {
  JournalEntry e{7, 1700000000, "PATCH", "/api/v1/namespaces/d/pods/p/status?fieldManager=x",
                 "application/strategic-merge-patch+json", "kubelet/v1.32", "kubelet", "Bearer t",
                 "/v1/pods/d/p", 40, "", "{\"status\":{\"podIP\":\"10.0.0.5\"}}"};
  auto decoded = decode_journal_entry(7, encode_journal_entry(e));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, e);
  EXPECT_FALSE(decode_journal_entry(1, "{\"v\":2}"));
  EXPECT_FALSE(decode_journal_entry(1, "not json"));
}

}  // namespace
}  // namespace yurthub::cache
