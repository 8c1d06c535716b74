// What the journal keeps of offline writes for the replay (cache/journal.h): bodies as sent or
// in their JSON form, events and callers within their bounds, a full journal's 503, a restart,
// concurrent writers, and the entry encoding itself. The fixture: offline_writes_fixture.h.
#include <set>

#include <gtest/gtest.h>
#include <boost/asio/detached.hpp>

#include "test/cache/offline_writes_fixture.h"

namespace yurthub::cache {
namespace {

using namespace yurthub::cache::test_support;

// When a CSI driver registers, kubelet GETs its CSINode and PUTs it back, as protobuf, with the
// driver added (test/testdata/protobuf/csinode-update.pb). Offline the update is applied as its
// JSON form and journaled as JSON, so that the replay can re-base it if the cloud's moved on.
TEST_F(OfflineWritesTest, AProtobufCSINodeUpdateIsAppliedAndJournaledAsJson) {
  set_limits(JournalLimits{}, "edge-1");
  const std::string target = "/apis/storage.k8s.io/v1/csinodes/edge-1";
  cache_get(
      target,
      R"({"kind":"CSINode","apiVersion":"storage.k8s.io/v1","metadata":{"name":"edge-1",)"
      R"("uid":"7c0d9a8e-1b2c-4d3e-9f40-5a6b7c8d9e0f","resourceVersion":"4711",)"
      R"("creationTimestamp":"2026-11-23T09:00:00Z","managedFields":[{"manager":"kubelet"}]},)"
      R"("spec":{"drivers":null}})");
  auto updated = write("PUT", target, "application/vnd.kubernetes.protobuf",
                       protobuf_fixture("csinode-update.pb"));
  ASSERT_EQ(updated.status, 200u) << updated.body;
  auto csinode = parse(updated.body);
  ASSERT_TRUE(csinode["spec"]["drivers"].IsArray());
  EXPECT_STREQ(csinode["spec"]["drivers"][0]["name"].GetString(), "csi.example.com");
  EXPECT_EQ(csinode["spec"]["drivers"][0]["allocatable"]["count"].GetInt(), 16);
  EXPECT_STREQ(csinode["metadata"]["resourceVersion"].GetString(), "4711");
  // What the protobuf body cannot carry is kept from the cached object, as the apiserver does.
  EXPECT_STREQ(csinode["metadata"]["creationTimestamp"].GetString(), "2026-11-23T09:00:00Z");
  EXPECT_STREQ(csinode["metadata"]["managedFields"][0]["manager"].GetString(), "kubelet");
  auto id = policy_.identity(request("GET", target));
  EXPECT_EQ(object_json(id->key(), "", "edge-1"), updated.body);
  auto entries = journaled();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].method, "PUT");
  EXPECT_EQ(entries[0].content_type, "application/json");
  auto sent = parse(entries[0].body);
  ASSERT_TRUE(sent.IsObject()) << entries[0].body;
  EXPECT_STREQ(sent["spec"]["drivers"][0]["nodeID"].GetString(), "edge-1");
  EXPECT_STREQ(sent["metadata"]["resourceVersion"].GetString(), "4711");

  // A stale resourceVersion is the apiserver's 409; a lease sent to a CSINode's URL is a 400;
  // kinds the hub cannot read as protobuf keep their 415.
  cache_get(target,
            R"({"kind":"CSINode","apiVersion":"storage.k8s.io/v1","metadata":{"name":"edge-1",)"
            R"("uid":"7c0d9a8e-1b2c-4d3e-9f40-5a6b7c8d9e0f","resourceVersion":"4800"},)"
            R"("spec":{"drivers":null}})");
  EXPECT_EQ(write("PUT", target, "application/vnd.kubernetes.protobuf",
                  protobuf_fixture("csinode-update.pb"))
                .status,
            409u);
  EXPECT_EQ(write("PUT", target, "application/vnd.kubernetes.protobuf",
                  protobuf_fixture("lease-update.pb"))
                .status,
            400u);
  cache_get(
      "/api/v1/nodes/edge-1",
      R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"edge-1","resourceVersion":"7"}})");
  EXPECT_EQ(write("PUT", "/api/v1/nodes/edge-1", "application/vnd.kubernetes.protobuf",
                  protobuf_fixture("node-create.pb"))
                .status,
            415u);
}

TEST_F(OfflineWritesTest, AProtobufEventIsJournaledAsSent) {
  set_limits(JournalLimits{}, "edge-1");
  const std::string body = protobuf_fixture("event-create.pb");
  auto out = write("POST", "/api/v1/namespaces/default/events",
                   "application/vnd.kubernetes.protobuf", body);
  ASSERT_EQ(out.status, 201u) << out.body;
  EXPECT_EQ(out.content_type, "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(out.body, body);
  auto entries = journaled();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].body, body);
  EXPECT_EQ(entries[0].object, "/v1/events/default/edge-1.17a9b3c4d5e6f708");
  // events.k8s.io is not the node's to write.
  auto other = write("POST", "/apis/events.k8s.io/v1/namespaces/default/events", "application/json",
                     R"({"metadata":{"name":"x"}})");
  EXPECT_EQ(other.status, 403u);
}

TEST_F(OfflineWritesTest, EventsAreJournaledUpToTheirBoundOldestDroppedFirst) {
  set_limits(JournalLimits{10000, 64u << 20, 2});
  for (const char* name : {"a", "b", "c"}) {
    auto out = write("POST", "/api/v1/namespaces/default/events", "application/json",
                     std::string(R"({"kind":"Event","apiVersion":"v1","metadata":{"name":")") +
                         name + R"(","namespace":"default"},"reason":"Started"})");
    EXPECT_EQ(out.status, 201u) << out.body;
  }
  auto generated =
      write("POST", "/api/v1/namespaces/default/events", "application/json",
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
  EXPECT_EQ(
      write("PATCH", target, "application/merge-patch+json", R"({"status":{"phase":"Running"}})")
          .status,
      200u);
  auto full =
      write("PATCH", target, "application/merge-patch+json", R"({"status":{"phase":"Failed"}})");
  EXPECT_EQ(full.status, 503u);
  EXPECT_NE(full.body.find("journal is full"), std::string::npos) << full.body;
  EXPECT_STREQ(parse(kubelet_pod())["status"]["phase"].GetString(), "Running");
  EXPECT_NE(journal_metrics().find("node_yurthub_journal_refused_total{reason=\"full\"} 1"),
            std::string::npos)
      << journal_metrics();
}

// Issue 30: a local user without a token writes as the node, but may fill only its share of the
// journal (half); the rest stays for kubelet (root on the node), also after a restart.
TEST_F(OfflineWritesTest, CallersOtherThanRootFillOnlyTheirShareOfTheJournal) {
  set_limits(JournalLimits{4, 64u << 20, 1000});
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  const std::string target = "/api/v1/namespaces/default/pods/web-0/status";
  auto patch = [&](const char* phase, bool privileged) {
    return write("PATCH", target, "application/merge-patch+json",
                 std::string(R"({"status":{"phase":")") + phase + R"("}})", "kubelet/v1.32.4", "",
                 privileged)
        .status;
  };
  EXPECT_EQ(patch("Running", false), 200u);
  EXPECT_EQ(patch("Running", false), 200u);
  auto refused = write("PATCH", target, "application/merge-patch+json",
                       R"({"status":{"phase":"Failed"}})", "kubelet/v1.32.4", "", false);
  EXPECT_EQ(refused.status, 503u);
  EXPECT_NE(refused.body.find("kept for kubelet"), std::string::npos) << refused.body;
  EXPECT_EQ(patch("Running", true), 200u) << "kubelet's half";
  EXPECT_EQ(patch("Running", true), 200u);
  EXPECT_EQ(patch("Running", true), 503u) << "the whole journal is full";
  auto entries = journaled();
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_FALSE(entries[0].privileged_peer);
  EXPECT_TRUE(entries[3].privileged_peer);

  // After a restart the share is counted from the store: with room for a fifth entry, the others'
  // half (2 of 5) is still full.
  base::MetricsRegistry fresh;
  Journal reloaded(fresh, JournalLimits{5, 64u << 20, 1000});
  reloaded.load(*store_->read());
  std::string why;
  (void)store_->write([&](WriteTxn& txn) -> Status {
    auto append = reloaded.stage_append(txn, entries[0], false);
    if (!append) {
      why = append.error().message;
      return append.error();
    }
    reloaded.abort_append(*append);
    return make_error("staged only to see whether it fits");
  });
  EXPECT_NE(why.find("kept for kubelet"), std::string::npos) << why;
}

TEST_F(OfflineWritesTest, TheJournalIsStillThereAfterARestart) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  write("PATCH", "/api/v1/namespaces/default/pods/web-0/status", "application/merge-patch+json",
        R"({"status":{"phase":"Running"}})");
  base::MetricsRegistry fresh;
  Journal reloaded(fresh, JournalLimits{});
  reloaded.load(*store_->read());
  EXPECT_EQ(reloaded.size(), 1u);
  EXPECT_TRUE(reloaded.pending("/v1/pods/default/web-0"));
  EXPECT_FALSE(reloaded.pending("/v1/pods/default/web-1"));
}

// Many clients writing at once while offline: the writer runs one write's task right after
// another's commit, before the first client resumes. Every acknowledged write must be in the
// journal under its own sequence number (they once shared one, and the second overwrote the
// first after both clients got their answer).
TEST_F(OfflineWritesTest, ConcurrentOfflineWritersEachKeepTheirOwnJournalEntry) {
  cache_get("/api/v1/namespaces/default/pods/web-0", kPod);
  constexpr int kWriters = 60;
  boost::asio::io_context io;
  std::vector<RecordingWriter> outs(kWriters);
  for (int i = 0; i < kWriters; ++i) {
    const bool event = i % 2 == 0;
    const std::string target = event ? "/api/v1/namespaces/default/events"
                                     : "/api/v1/namespaces/default/pods/web-0/status";
    const std::string body =
        event ? R"({"metadata":{"name":"e)" + std::to_string(i) + R"(","namespace":"default"}})"
              : R"({"status":{"message":"m)" + std::to_string(i) + R"("}})";
    boost::asio::co_spawn(
        io,
        [this, target, body, event, &out = outs[i]]() -> boost::asio::awaitable<void> {
          const char* method = event ? "POST" : "PATCH";
          const char* type = event ? "application/json" : "application/merge-patch+json";
          auto info = request(method, target);
          hub::OfflineWrite w{method, target, type, "kubelet/v1.32.4", "", body};
          co_await writes_->serve(info, w, out);
        },
        boost::asio::detached);
  }
  io.run();
  writer_->wait_tasks();  // the writer's last post to `io` has returned before `io` goes
  int acknowledged = 0;
  for (const auto& out : outs) acknowledged += out.status / 100 == 2 ? 1 : 0;
  EXPECT_EQ(acknowledged, kWriters);
  auto entries = journaled();
  EXPECT_EQ(static_cast<int>(entries.size()), acknowledged);
  EXPECT_EQ(static_cast<int>(journal_->size()), acknowledged);
  std::set<std::uint64_t> seqs;
  for (const auto& e : entries) seqs.insert(e.seq);
  EXPECT_EQ(seqs.size(), entries.size());
}

TEST(JournalEntryTest, EncodesAndDecodesEveryField) {
  JournalEntry e{7,
                 1700000000,
                 "PATCH",
                 "/api/v1/namespaces/d/pods/p/status?fieldManager=x",
                 "application/strategic-merge-patch+json",
                 "kubelet/v1.32",
                 "kubelet",
                 "Bearer t",
                 "/v1/pods/d/p",
                 40,
                 "",
                 "{\"status\":{\"podIP\":\"10.0.0.5\"}}"};
  auto decoded = decode_journal_entry(7, encode_journal_entry(e));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, e);
  EXPECT_FALSE(decode_journal_entry(1, "{\"v\":2}"));
  EXPECT_FALSE(decode_journal_entry(1, "not json"));
}

// kubelet's events are protobuf: every byte value survives, and the entry stays readable text.
TEST(JournalEntryTest, ProtobufBodiesSurviveAsBase64) {
  std::string body("k8s\0\x0a\x02\x80\xff\x00\"\\end", 13);
  JournalEntry e{8,
                 1700000000,
                 "POST",
                 "/api/v1/namespaces/default/events",
                 "application/vnd.kubernetes.protobuf",
                 "kubelet/v1.26.1",
                 "kubelet",
                 "",
                 "/v1/events/default/e",
                 0,
                 "",
                 body};
  const std::string encoded = encode_journal_entry(e);
  EXPECT_EQ(encoded.find('\0'), std::string::npos);
  EXPECT_NE(encoded.find(R"("bodyBase64":true)"), std::string::npos);
  auto decoded = decode_journal_entry(8, encoded);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->body, body);
  EXPECT_EQ(*decoded, e);
}

// Entries journaled before base/base64.h (Beast's encoder: standard alphabet, padded) read back
// the same, and are written byte for byte as before.
TEST(JournalEntryTest, EarlierEntriesOnDiskStillDecode) {
  const std::string on_disk =
      R"({"v":1,"created":1700000000,"baseResourceVersion":0,"method":"POST",)"
      R"("target":"/api/v1/namespaces/default/events",)"
      R"("contentType":"application/vnd.kubernetes.protobuf","userAgent":"kubelet/v1.26.1",)"
      R"("component":"kubelet","authorization":"","object":"/v1/events/default/e","base":"",)"
      R"("body":"azhzAAqA/w==","bodyBase64":true})";
  auto decoded = decode_journal_entry(8, on_disk);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->body, std::string("k8s\0\n\x80\xff", 7));
  EXPECT_EQ(encode_journal_entry(*decoded), on_disk);
  std::string bad = on_disk;
  bad.replace(bad.find("azhzAAqA/w=="), 12, "azhzAAqA/w=");  // truncated padding
  EXPECT_FALSE(decode_journal_entry(8, bad));
}

}  // namespace
}  // namespace yurthub::cache
