// WatchCache: lists replace and diff, events apply, watches resume from the window.
#include "pool/watch_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace yurthub::pool {
namespace {

std::string slice(const std::string& name, int rv, const std::string& extra = "") {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"default","resourceVersion":")" +
         std::to_string(rv) + R"("}, "endpoints":[)" + extra + "]}";
}

std::string list(int rv, const std::vector<std::string>& items) {
  std::string body = R"({"kind":"EndpointSliceList","apiVersion":"discovery.k8s.io/v1",)"
                     R"("metadata":{"resourceVersion":")" +
                     std::to_string(rv) + R"("},"items":[)";
  for (std::size_t i = 0; i < items.size(); ++i) body += (i ? "," : "") + items[i];
  return body + "]}";
}

std::string event(const std::string& type, const std::string& object) {
  std::string typed = object;
  typed.insert(1, R"("kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1",)");
  return R"({"type":")" + type + R"(","object":)" + typed + "}";
}

struct Fed {
  net::EventVerdict verdict;
  std::string rv, reason;
};

Fed feed(WatchCache& cache, const std::string& raw) {
  Fed f;
  f.verdict = cache.event(raw, &f.rv, &f.reason);
  cache.events_done();
  return f;
}

void list_into(WatchCache& cache, const std::string& body) {
  std::string rv;
  ASSERT_TRUE(cache.listed(body, &rv));
  cache.events_done();
}

std::vector<std::string> types_and_names(const std::vector<EventPtr>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    const char* type = e->type == CacheEvent::Type::Added      ? "ADDED"
                       : e->type == CacheEvent::Type::Modified ? "MODIFIED"
                                                               : "DELETED";
    out.push_back(std::string(type) + " " + e->object->name);
  }
  return out;
}

TEST(WatchCache, AListIsTheSnapshotAndItsItemsCarryNoTypeMeta) {
  WatchCache cache({});
  EXPECT_FALSE(cache.synced());
  list_into(cache, list(10, {slice("b", 9), slice("a", 8)}));
  ASSERT_TRUE(cache.synced());
  auto snap = cache.snapshot();
  EXPECT_EQ(snap->resource_version, 10u);
  EXPECT_EQ(snap->kind, "EndpointSlice");
  EXPECT_EQ(snap->api_version, "discovery.k8s.io/v1");
  ASSERT_EQ(snap->objects.size(), 2u);
  EXPECT_EQ(snap->objects[0]->key, "default/a");  // sorted by key

  // A watch event's object is kept as a list item too: without kind and apiVersion.
  ASSERT_EQ(feed(cache, event("MODIFIED", slice("a", 11))).verdict, net::EventVerdict::Ok);
  snap = cache.snapshot();
  EXPECT_EQ(snap->resource_version, 11u);
  EXPECT_EQ(snap->objects[0]->json.find("\"kind\""), std::string::npos) << snap->objects[0]->json;
}

TEST(WatchCache, AWatchResumesFromTheWindowAndExpiresBeforeIt) {
  WatchCache::Options o;
  o.window_events = 2;
  WatchCache cache(o);
  list_into(cache, list(10, {slice("a", 8)}));
  feed(cache, event("ADDED", slice("b", 11)));
  auto from_11 = cache.watch(11, [] {});
  EXPECT_TRUE(from_11.backlog.empty());
  feed(cache, event("MODIFIED", slice("a", 12)));
  feed(cache, event("DELETED", slice("b", 13)));
  auto from_11_again = cache.watch(11, [] {});
  ASSERT_FALSE(from_11_again.expired);
  EXPECT_EQ(types_and_names(from_11_again.backlog),
            (std::vector<std::string>{"MODIFIED a", "DELETED b"}));
  EXPECT_EQ(types_and_names(from_11.subscription->take()),
            (std::vector<std::string>{"MODIFIED a", "DELETED b"}));
  // Three events, a window of two: from 10 the event at 11 is gone.
  EXPECT_TRUE(cache.watch(10, [] {}).expired);
}

TEST(WatchCache, TheWindowIsBoundedInBytesToo) {
  WatchCache::Options o;
  o.window_bytes = 400;  // an event here holds about 180 bytes (the object and its state before)
  WatchCache cache(o);
  list_into(cache, list(10, {slice("a", 8)}));
  for (int rv = 11; rv < 15; ++rv) feed(cache, event("MODIFIED", slice("a", rv)));
  EXPECT_TRUE(cache.watch(11, [] {}).expired);
  auto recent = cache.watch(13, [] {});
  ASSERT_FALSE(recent.expired);
  EXPECT_EQ(recent.backlog.size(), 1u);
}

TEST(WatchCache, ARelistIsToldAsTheDifferenceAtTheListsResourceVersion) {
  WatchCache cache({});
  list_into(cache, list(10, {slice("a", 8), slice("b", 9), slice("c", 7)}));
  int woken = 0;
  auto watch = cache.watch(10, [&] { ++woken; });
  // After a 410: a changed, b gone, c the same, d new.
  list_into(cache, list(40, {slice("a", 30), slice("c", 7), slice("d", 35)}));
  auto events = watch.subscription->take();
  EXPECT_EQ(types_and_names(events),
            (std::vector<std::string>{"MODIFIED a", "ADDED d", "DELETED b"}));
  EXPECT_GT(woken, 0);
  for (const auto& e : events) EXPECT_EQ(e->position, 40u);
  // The deleted object carries the list's resourceVersion: a client never goes backwards.
  EXPECT_NE(events[2]->object->json.find(R"("resourceVersion":"40")"), std::string::npos)
      << events[2]->object->json;
  EXPECT_EQ(cache.resource_version(), 40u);
  // A watch from before the list resumes through the difference.
  EXPECT_EQ(cache.watch(10, [] {}).backlog.size(), 3u);
}

TEST(WatchCache, EventsAreToldAsWhatTheyAreForTheCache) {
  WatchCache cache({});
  list_into(cache, list(10, {slice("a", 8)}));
  auto watch = cache.watch(10, [] {});
  feed(cache, event("ADDED", slice("a", 11)));    // known: a modification
  feed(cache, event("DELETED", slice("z", 12)));  // unknown: nothing to tell
  feed(cache, event("BOOKMARK", R"({"metadata":{"resourceVersion":"15"}})"));
  EXPECT_EQ(types_and_names(watch.subscription->take()), (std::vector<std::string>{"MODIFIED a"}));
  EXPECT_EQ(cache.resource_version(), 15u);
}

TEST(WatchCache, ErrorsAndGarbageEndTheUpstreamWatch) {
  WatchCache cache({});
  list_into(cache, list(10, {}));
  auto gone = feed(cache, R"({"type":"ERROR","object":{"kind":"Status","code":410}})");
  EXPECT_EQ(gone.verdict, net::EventVerdict::Relist);
  EXPECT_EQ(feed(cache, "[1,2]").verdict, net::EventVerdict::Failed);
  EXPECT_EQ(feed(cache, event("ADDED", R"({"metadata":{}})")).verdict, net::EventVerdict::Failed);
  std::string rv;
  EXPECT_FALSE(cache.listed(R"({"items":[]})", &rv));  // no resourceVersion
  EXPECT_FALSE(cache.listed(R"({"items":[)", &rv));
}

TEST(WatchCache, ASlowSubscriptionOverflowsAndIsDropped) {
  WatchCache::Options o;
  o.max_pending = 2;
  WatchCache cache(o);
  list_into(cache, list(10, {}));
  auto watch = cache.watch(10, [] {});
  for (int i = 0; i < 3; ++i) feed(cache, event("ADDED", slice("s" + std::to_string(i), 11 + i)));
  EXPECT_TRUE(watch.subscription->overflowed());
  EXPECT_EQ(cache.subscribers(), 1u);
  watch.subscription.reset();
  EXPECT_EQ(cache.subscribers(), 0u);
}

}  // namespace
}  // namespace yurthub::pool
