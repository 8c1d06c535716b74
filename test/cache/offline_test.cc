// The cache end to end without the network: real apiserver bodies (fixtures) are fed through the
// response taps in arbitrary pieces into the writer and the LMDB store, then read back through the
// LocalProxy as a client would while offline.
#include "test/cache/offline_fixture.h"

namespace yurthub::cache {
namespace {

using namespace offline_testing;

TEST_F(OfflineTest, KubeletsPodListComesBackWithItsResourceVersion) {
  cache("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1&resourceVersion=0&limit=500",
        fixture("pods-list-node.body"));
  auto out = serve("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1");
  EXPECT_EQ(out.status, 200u);
  EXPECT_TRUE(out.finished);
  auto doc = parse_json(out.body);
  ASSERT_FALSE(doc.HasParseError()) << out.body.substr(0, 200);
  EXPECT_STREQ(doc["kind"].GetString(), "PodList");
  EXPECT_STREQ(doc["metadata"]["resourceVersion"].GetString(), "229");
  ASSERT_EQ(doc["items"].Size(), 1u);
  EXPECT_STREQ(doc["items"][0]["metadata"]["name"].GetString(), "web-0");
}

TEST_F(OfflineTest, NarrowerSelectorsAndNamespacesAreAnsweredFromAWiderList) {
  cache("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1", fixture("pods-list-node.body"));
  // Same node, and a label that matches / does not match: evaluated locally.
  auto hit = serve(
      "/api/v1/namespaces/default/"
      "pods?fieldSelector=spec.nodeName%3Dedge-node-1&labelSelector=app%3Dweb");
  EXPECT_EQ(hit.status, 200u);
  EXPECT_EQ(parse_json(hit.body)["items"].Size(), 1u);
  auto none =
      serve("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1&labelSelector=app%3Ddb");
  EXPECT_EQ(none.status, 200u);
  EXPECT_EQ(parse_json(none.body)["items"].Size(), 0u);
  // A wider request than anything cached is not answered with a partial list.
  auto wider = serve("/api/v1/pods");
  EXPECT_EQ(wider.status, 404u);
  EXPECT_THAT(wider.body, HasSubstr("\"reason\":\"NotFound\""));
}

TEST_F(OfflineTest, TwoSelectorsOnOneResourceAreBothKept) {
  // YurtHub #1963: a second list with another selector must not replace the first.
  cache("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1", fixture("pods-list-node.body"));
  cache("/api/v1/namespaces/default/pods?limit=500", fixture("pods-list-page2.body"));
  EXPECT_EQ(
      parse_json(serve("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1").body)["items"]
          .Size(),
      1u);
  auto page = serve("/api/v1/namespaces/default/pods?limit=500");
  EXPECT_EQ(page.status, 200u);
}

// Issue 30: any local caller may send kubelet's User-Agent; a list it asks for at an old
// resourceVersion (Exact, paginated, or by continue token) is relayed but never replaces the
// newer set kubelet is served offline. A list named at a newer version does.
TEST_F(OfflineTest, AListOfAnOlderResourceVersionNeverRollsTheCachedSetBack) {
  const char* kNode = "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1";
  cache(kNode, fixture("pods-list-node.body"));  // resourceVersion 229: web-0
  const std::string old_snapshot =
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"100"},"items":[)"
      R"({"metadata":{"name":"old-0","namespace":"default","resourceVersion":"90"}}]})";
  cache(
      "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1&resourceVersion=100&"
      "resourceVersionMatch=Exact",
      old_snapshot);
  cache("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1&resourceVersion=100&limit=500",
        old_snapshot);
  auto kept = parse_json(serve(kNode).body);
  EXPECT_STREQ(kept["metadata"]["resourceVersion"].GetString(), "229");
  ASSERT_EQ(kept["items"].Size(), 1u);
  EXPECT_STREQ(kept["items"][0]["metadata"]["name"].GetString(), "web-0");
  EXPECT_NE(registry_.render().find("node_yurthub_cache_older_lists_total 2"), std::string::npos)
      << registry_.render();

  cache("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1&resourceVersion=229",
        R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"300"},"items":[)"
        R"({"metadata":{"name":"web-1","namespace":"default","resourceVersion":"290"}}]})");
  auto newer = parse_json(serve(kNode).body);
  EXPECT_STREQ(newer["metadata"]["resourceVersion"].GetString(), "300");
  ASSERT_EQ(newer["items"].Size(), 1u);
  EXPECT_STREQ(newer["items"][0]["metadata"]["name"].GetString(), "web-1");
}

TEST_F(OfflineTest, NeverListedIs404NotAnEmptyList) {
  auto out = serve("/api/v1/services");
  EXPECT_EQ(out.status, 404u);
  EXPECT_THAT(out.body, HasSubstr("not cached on this node for kubelet"));
  EXPECT_EQ(serve("/api/v1/namespaces/default/pods/nope").status, 404u);
}

// A selector the apiserver refuses is refused offline too, in its words, before any lookup: not
// an empty list or a 404 that the client would read as an answer.
TEST_F(OfflineTest, SelectorsTheApiserverRefusesGet400) {
  cache("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1", fixture("pods-list-node.body"));
  struct Case {
    const char* target;
    const char* message;
  };
  const Case cases[] = {
      {"/api/v1/pods?fieldSelector=spec.bogus%3Dx", "field label not supported: spec.bogus"},
      {"/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1&labelSelector=env%3D%3D%3Dx",
       "unable to parse requirement: found '=', expected: identifier"},
      {"/api/v1/services?fieldSelector=spec.clusterIP%3DNone",
       R"(\"spec.clusterIP\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\")"},
      {"/api/v1/pods?fieldSelector=spec.bogus%3Dx&watch=true",
       "field label not supported: spec.bogus"},
      // A cluster-scoped kind's conversion knows no namespace (v1.26's Node conversion).
      {"/api/v1/nodes?fieldSelector=metadata.namespace%3Dx",
       "field label not supported: metadata.namespace"},
  };
  for (const Case& c : cases) {
    auto out = serve(c.target);
    EXPECT_EQ(out.status, 400u) << c.target;
    EXPECT_THAT(out.body,
                HasSubstr(std::string(R"("message":")") + c.message + R"(","reason":"BadRequest")"))
        << out.body;
  }
  // What the apiserver takes still works.
  EXPECT_EQ(serve("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1,status.phase%21%3DFailed")
                .status,
            200u);
  EXPECT_EQ(
      serve("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1,metadata.namespace%3Ddefault")
          .status,
      200u);
}

// A store that counts the read views open, so a test can see whether one is held while the
// client is being written to.
class CountingStore : public Store {
 public:
  explicit CountingStore(Store& inner) : inner_(inner) {}
  int open_views = 0;
  std::unique_ptr<ReadView> read() override {
    return std::make_unique<View>(inner_.read(), open_views);
  }
  Status write(const std::function<Status(WriteTxn&)>& fn) override { return inner_.write(fn); }
  StoreStats stats() override { return inner_.stats(); }

 private:
  class View : public ReadView {
   public:
    View(std::unique_ptr<ReadView> inner, int& open) : inner_(std::move(inner)), open_(open) {
      ++open_;
    }
    ~View() override { --open_; }
    std::optional<ListRecord> list(std::string_view key) override { return inner_->list(key); }
    std::vector<std::pair<std::string, ListRecord>> lists_with_prefix(std::string_view p) override {
      return inner_->lists_with_prefix(p);
    }
    std::optional<StoredObject> object(std::uint32_t set, std::string_view ns,
                                       std::string_view name) override {
      return inner_->object(set, ns, name);
    }
    void scan(std::uint32_t set, std::string_view ns, std::string_view after_ns,
              std::string_view after,
              const std::function<bool(std::string_view, std::string_view, const StoredObject&)>&
                  visit) override {
      inner_->scan(set, ns, after_ns, after, visit);
    }
    std::optional<std::string> discovery(std::string_view path) override {
      return inner_->discovery(path);
    }
    void scan_journal(const std::function<bool(std::uint64_t, std::string_view)>& visit) override {
      inner_->scan_journal(visit);
    }
    std::optional<std::string> secret(Secrets db, std::string_view key) override {
      return inner_->secret(db, key);
    }
    void scan_secrets(
        Secrets db, const std::function<bool(std::string_view, std::string_view)>& visit) override {
      inner_->scan_secrets(db, visit);
    }

   private:
    std::unique_ptr<ReadView> inner_;
    int& open_;
  };
  Store& inner_;
};

// Counts the writes made while the cache's snapshot is open; each write moves `clock` on by `step`.
struct SnapshotCheckingWriter : RecordingWriter {
  CountingStore* store = nullptr;
  base::TestClock* clock = nullptr;
  std::chrono::milliseconds step{0};
  int writes = 0, writes_with_view = 0, writes_after_release = 0;
  boost::asio::awaitable<bool> write(std::string_view bytes) override {
    ++writes;
    if (store->open_views != 0) ++writes_with_view;
    if (store->open_views == 0 && writes_with_view > 0) ++writes_after_release;
    body.append(bytes);
    if (clock) clock->advance(step);
    co_return true;
  }
};

// A slow client must not hold the cache's snapshot open: LMDB could not reuse the pages it pins,
// and the file would grow with every write meanwhile. With no time to hold it, nothing is written
// while it is open.
TEST_F(OfflineTest, NoSnapshotIsHeldWhileTheClientReads) {
  cache("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1", fixture("pods-list-node.body"));
  CountingStore counting(*store_);
  LocalProxy::Options options{std::chrono::seconds(1800), std::chrono::seconds(60), 64};
  options.snapshot_hold = std::chrono::milliseconds(0);
  LocalProxy proxy(counting, *metrics_, events_, options);
  for (const char* target : {"/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1",
                             "/api/v1/namespaces/default/pods/web-0", "/api/v1/services"}) {
    SnapshotCheckingWriter out;
    out.store = &counting;
    auto info = kubelet("GET", target);
    run(proxy.serve(info, policy_.identity(info), out));
    EXPECT_GT(out.writes, 0) << target;
    EXPECT_EQ(out.writes_with_view, 0) << target;
  }
}

// A client that keeps up reads the list straight from the snapshot; one that is slower than the
// snapshot may be held gets the rest from a copy, and the snapshot is released. Either way it
// receives the same list.
TEST_F(OfflineTest, ASlowClientGetsTheRestFromACopyAndTheSnapshotIsReleased) {
  const char* target = "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1";
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) names.push_back("web-" + std::to_string(i));
  cache(target, pod_list(names, 7));
  const std::string expected = serve(target).body;
  ASSERT_EQ(parse_json(expected)["items"].Size(), 40u);
  CountingStore counting(*store_);
  base::TestClock clock;  // the snapshot hold is timed on it
  LocalProxy::Options options{std::chrono::seconds(1800), std::chrono::seconds(60), 64};
  options.snapshot_hold = std::chrono::milliseconds(1000);
  LocalProxy proxy(counting, *metrics_, events_, options);
  auto info = kubelet("GET", target);

  SnapshotCheckingWriter fast;
  fast.store = &counting;
  run(proxy.serve(info, policy_.identity(info), fast));
  EXPECT_EQ(fast.body, expected);
  EXPECT_GT(fast.writes_with_view, 3);  // straight from the snapshot: no copy of the list

  SnapshotCheckingWriter slow;
  slow.store = &counting;
  slow.clock = &clock;
  slow.step = std::chrono::milliseconds(400);
  run(proxy.serve(info, policy_.identity(info), slow));
  EXPECT_EQ(slow.body, expected);
  EXPECT_EQ(slow.writes_with_view, 3);  // at 0, 400 and 800 ms; at 1200 the rest was copied
  EXPECT_GT(slow.writes_after_release, 0);
  EXPECT_EQ(counting.open_views, 0);
}

TEST_F(OfflineTest, GetFindsObjectsFromListsWithKindAdded) {
  cache("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1", fixture("pods-list-node.body"));
  auto out = serve("/api/v1/namespaces/default/pods/web-0");
  ASSERT_EQ(out.status, 200u);
  auto doc = parse_json(out.body);
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_STREQ(doc["kind"].GetString(), "Pod");  // list items carry no kind; a GET answer does
  EXPECT_STREQ(doc["apiVersion"].GetString(), "v1");
  EXPECT_STREQ(doc["spec"]["nodeName"].GetString(), "edge-node-1");
}

TEST_F(OfflineTest, NodeFromAGetIsServedAsIs) {
  cache("/api/v1/nodes/edge-node-1", fixture("node-get.body"));
  auto out = serve("/api/v1/nodes/edge-node-1");
  ASSERT_EQ(out.status, 200u);
  EXPECT_EQ(parse_json(out.body)["metadata"]["name"], "edge-node-1");
}

TEST_F(OfflineTest, WatchEventsUpdateTheCachedList) {
  cache("/api/v1/namespaces/default/pods?labelSelector=app%3Dweb", fixture("pods-list-node.body"));
  cache("/api/v1/namespaces/default/pods?labelSelector=app%3Dweb&watch=1&resourceVersion=229",
        fixture("pods-watch.stream"));
  // The fixture's watch modifies web-0 three times, deletes it (rv 233), then bookmarks 233.
  auto out = serve("/api/v1/namespaces/default/pods?labelSelector=app%3Dweb");
  ASSERT_EQ(out.status, 200u) << out.body;
  auto doc = parse_json(out.body);
  EXPECT_STREQ(doc["metadata"]["resourceVersion"].GetString(), "233");
  EXPECT_EQ(doc["items"].Size(), 0u);
}

TEST_F(OfflineTest, LimitAndContinuePageThroughTheCache) {
  cache("/api/v1/pods?labelSelector=app%3Dweb", pod_list({"a", "b", "c"}, 50));
  std::vector<std::string> seen;
  std::string target = "/api/v1/pods?labelSelector=app%3Dweb&limit=2";
  for (int page = 0; page < 3; ++page) {
    auto out = serve(target.c_str());
    ASSERT_EQ(out.status, 200u) << out.body;
    auto doc = parse_json(out.body);
    for (const auto& item : doc["items"].GetArray())
      seen.push_back(item["metadata"]["name"].GetString());
    if (!doc["metadata"].HasMember("continue")) break;
    target = "/api/v1/pods?labelSelector=app%3Dweb&limit=2&continue=" +
             std::string(doc["metadata"]["continue"].GetString());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c"}));
  // The apiserver's own token (from before the link dropped) cannot be resumed: start over.
  auto foreign = serve("/api/v1/pods?labelSelector=app%3Dweb&limit=1&continue=eyJ2IjoibWV0YSJ9");
  EXPECT_EQ(foreign.status, 410u);
  EXPECT_THAT(foreign.body, HasSubstr("\"reason\":\"Expired\""));
}

TEST_F(OfflineTest, FirstPageAloneIsNotAList) {
  cache("/api/v1/namespaces/default/pods?limit=1", fixture("pods-list-page1.body"));
  EXPECT_EQ(serve("/api/v1/namespaces/default/pods?limit=1").status, 404u);
}

TEST_F(OfflineTest, WatchIsHeldWithBookmarksUntilTheCloudReturns) {
  cache("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1", fixture("pods-list-node.body"));
  auto out = serve(
      "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1&watch=1&allowWatchBookmarks=true",
      [](int call) -> std::optional<hub::StreamEnd> {
        if (call < 3) return std::nullopt;  // two bookmark periods pass
        return hub::StreamEnd::ServerHealthy;
      });
  EXPECT_EQ(out.status, 200u);
  EXPECT_TRUE(out.finished);
  const std::string bookmark =
      R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"229"}}})"
      "\n";
  EXPECT_EQ(out.body, bookmark + bookmark);
}

TEST_F(OfflineTest, WatchWithoutBookmarksSendsNothing) {
  cache("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1", fixture("pods-list-node.body"));
  auto out = serve("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1&watch=1",
                   [](int) -> std::optional<hub::StreamEnd> { return hub::StreamEnd::ClientGone; });
  EXPECT_EQ(out.status, 200u);
  EXPECT_EQ(out.body, "");
}

TEST_F(OfflineTest, MalformedListIsNotCachedAndMarksTheListStale) {
  cache("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1", fixture("pods-list-node.body"));
  auto info = kubelet("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1");
  auto id = policy_.identity(info);
  auto tap = make_list_tap(*writer_, *metrics_, *id, info);
  tap->body(
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"300"},"items":[{"metadata":{"name":"x"}},]})");
  tap->end(true);
  writer_->flush();
  EXPECT_TRUE(tap->failed());
  EXPECT_TRUE(store_->read()->list(id->key())->stale);
  // The previous complete list is still what is served.
  EXPECT_STREQ(parse_json(serve("/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1")
                              .body)["metadata"]["resourceVersion"]
                   .GetString(),
               "229");
  EXPECT_EQ(metrics_->failures.with({"framing"}).value(), 1u);
}

}  // namespace
}  // namespace yurthub::cache
