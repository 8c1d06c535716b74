// Unit tests for the fake apiserver's Store and Watcher: resourceVersion ordering, the history
// window and its 410, selector-driven ADDED/DELETED transitions, watch queue overflow and list
// pagination with continue tokens.
#include "test/fake_apiserver/store.h"

#include <gtest/gtest.h>

#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake {
namespace {

const std::string kPods = "/pods";

rapidjson::Document pod(const std::string& ns, const std::string& name,
                        const std::string& app = "web") {
  auto doc = parse_json(R"({"metadata":{"name":")" + name + R"(","namespace":")" + ns +
                        R"(","labels":{"app":")" + app + R"("}},"spec":{}})");
  return std::move(*doc);
}

void put_pod(Store& s, const std::string& ns, const std::string& name,
             const std::string& app = "web") {
  auto doc = pod(ns, name, app);
  s.put(kPods, ns, name, doc);
}

std::string rv_of(const std::string& json) {
  auto doc = parse_json(json);
  return meta_string(*doc, "resourceVersion");
}

WatchFilter filter(const std::string& labels = "", const std::string& ns = "") {
  WatchFilter f;
  f.resource = kPods;
  f.ns = ns;
  f.labels = *LabelSelector::parse(labels);
  f.fields = *FieldSelector::parse("");
  return f;
}

std::vector<std::pair<EventType, std::string>> drain(Watcher& w) {
  std::vector<std::pair<EventType, std::string>> out;
  while (auto item = w.pop()) out.emplace_back(item->type, rv_of(*item->object));
  return out;
}

TEST(StoreTest, ResourceVersionsIncreaseAcrossResourcesAndAreStamped) {
  Store s(100, 100);
  auto a = pod("default", "a");
  StoredObject first = s.put(kPods, "default", "a", a);
  auto cm = parse_json(R"({"metadata":{"name":"c","namespace":"default"}})");
  StoredObject second = s.put("/configmaps", "default", "c", *cm);
  EXPECT_EQ(first.rv, 101u);
  EXPECT_EQ(second.rv, 102u);
  EXPECT_EQ(rv_of(*first.json), "101");
  auto removed = s.remove(kPods, "default", "a");
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->rv, 103u);
  EXPECT_EQ(rv_of(*removed->json), "103");  // the deleted object carries the deletion's RV
  EXPECT_EQ(s.current_rv(), 103u);
  EXPECT_FALSE(s.remove(kPods, "default", "a"));
}

TEST(StoreTest, WatchFromResourceVersionReplaysLaterEventsThenLiveOnes) {
  Store s(100);
  put_pod(s, "default", "a");  // 101
  put_pod(s, "default", "b");  // 102
  put_pod(s, "default", "a");  // 103
  WatchStart start = s.watch(filter(), 101, 10);
  ASSERT_FALSE(start.expired);
  put_pod(s, "default", "c");  // 104, live
  auto events = drain(*start.watcher);
  std::vector<std::pair<EventType, std::string>> want = {
      {EventType::Added, "102"}, {EventType::Modified, "103"}, {EventType::Added, "104"}};
  EXPECT_EQ(events, want);
  s.unwatch(start.watcher);
  EXPECT_EQ(s.watcher_count(), 0u);
}

TEST(StoreTest, WatchFromZeroSendsSyntheticAddedForCurrentMatches) {
  Store s(100);
  put_pod(s, "default", "a", "web");
  put_pod(s, "default", "b", "db");
  put_pod(s, "other", "c", "web");
  WatchStart start = s.watch(filter("app=web", "default"), std::nullopt, 10);
  auto events = drain(*start.watcher);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].first, EventType::Added);
  EXPECT_EQ(events[0].second, "101");
}

TEST(StoreTest, WatchOlderThanHistoryWindowExpires) {
  Store s(3);
  for (int i = 0; i < 5; ++i) put_pod(s, "default", "p" + std::to_string(i));  // 101..105
  // History keeps 103..105: a watch from 102 misses nothing, one from 101 missed 102.
  WatchStart ok = s.watch(filter(), 102, 10);
  EXPECT_FALSE(ok.expired);
  EXPECT_EQ(drain(*ok.watcher).size(), 3u);
  WatchStart old = s.watch(filter(), 101, 10);
  EXPECT_TRUE(old.expired);
  EXPECT_EQ(old.oldest, 102u);
  EXPECT_EQ(old.watcher, nullptr);
}

TEST(StoreTest, SelectorTransitionsBecomeAddedAndDeleted) {
  Store s(100);
  put_pod(s, "default", "a", "db");  // 101: not matching
  WatchStart start = s.watch(filter("app=web"), std::nullopt, 10);
  Watcher& w = *start.watcher;
  EXPECT_TRUE(w.empty());
  put_pod(s, "default", "a", "web");  // 102: moves in
  put_pod(s, "default", "a", "web");  // 103: stays in
  put_pod(s, "default", "a", "db");   // 104: moves out
  put_pod(s, "default", "a", "db");   // 105: stays out
  put_pod(s, "default", "a", "web");  // 106: back in
  s.remove(kPods, "default", "a");    // 107: deleted while matching
  std::vector<std::pair<EventType, std::string>> want = {{EventType::Added, "102"},
                                                         {EventType::Modified, "103"},
                                                         {EventType::Deleted, "104"},
                                                         {EventType::Added, "106"},
                                                         {EventType::Deleted, "107"}};
  EXPECT_EQ(drain(w), want);
}

TEST(StoreTest, DeletedOnMoveOutCarriesThePreviousStateAtTheNewVersion) {
  Store s(100);
  put_pod(s, "default", "a", "web");
  WatchStart start = s.watch(filter("app=web"), std::nullopt, 10);
  start.watcher->pop();  // the initial ADDED
  put_pod(s, "default", "a", "db");
  auto item = start.watcher->pop();
  ASSERT_TRUE(item);
  EXPECT_EQ(item->type, EventType::Deleted);
  auto doc = parse_json(*item->object);
  EXPECT_EQ(meta_string(*doc, "resourceVersion"), "102");
  EXPECT_STREQ((*doc)["metadata"]["labels"]["app"].GetString(), "web");
}

TEST(StoreTest, NamespaceScopedWatchIgnoresOtherNamespacesAndResources) {
  Store s(100);
  WatchStart start = s.watch(filter("", "default"), std::nullopt, 10);
  put_pod(s, "other", "x");
  auto cm = parse_json(R"({"metadata":{"name":"c","namespace":"default"}})");
  s.put("/configmaps", "default", "c", *cm);
  put_pod(s, "default", "y");
  auto events = drain(*start.watcher);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].second, "103");
}

TEST(StoreTest, SlowWatcherOverflowsAndIsWoken) {
  Store s(100);
  for (int i = 0; i < 5; ++i) put_pod(s, "default", "p" + std::to_string(i));
  WatchStart start = s.watch(filter(), std::nullopt, 3);
  int wakeups = 0;
  start.watcher->set_wakeup([&] { ++wakeups; });
  EXPECT_EQ(start.watcher->size(), 5u);  // initial events do not count against the bound
  for (int i = 0; i < 3; ++i) put_pod(s, "default", "q" + std::to_string(i));
  EXPECT_FALSE(start.watcher->overflowed());
  put_pod(s, "default", "q3");
  EXPECT_TRUE(start.watcher->overflowed());
  EXPECT_TRUE(start.watcher->empty());
  EXPECT_EQ(wakeups, 4);
}

TEST(StoreTest, CloseAllWatchersClosesAndWakes) {
  Store s(100);
  WatchStart start = s.watch(filter(), std::nullopt, 3);
  bool woken = false;
  start.watcher->set_wakeup([&] { woken = true; });
  s.close_all_watchers();
  EXPECT_TRUE(start.watcher->closed());
  EXPECT_TRUE(woken);
}

TEST(StoreTest, ListIsSortedByNamespaceThenName) {
  Store s(100);
  put_pod(s, "zeta", "a");
  put_pod(s, "alpha", "b");
  put_pod(s, "alpha", "a");
  ListOptions lo;
  lo.resource = kPods;
  ListResult r = s.list(lo);
  ASSERT_EQ(r.items.size(), 3u);
  std::vector<std::string> names;
  for (const auto& item : r.items) {
    auto d = parse_json(*item);
    names.push_back(meta_string(*d, "namespace") + "/" + meta_string(*d, "name"));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"alpha/a", "alpha/b", "zeta/a"}));
  EXPECT_EQ(r.rv, 103u);
}

TEST(StoreTest, PaginationWithContinueTokens) {
  Store s(100);
  for (const char* n : {"a", "b", "c", "d", "e"}) put_pod(s, "default", n);
  put_pod(s, "other", "z");
  ListOptions lo;
  lo.resource = kPods;
  lo.ns = "default";
  lo.limit = 2;
  ListResult p1 = s.list(lo);
  ASSERT_EQ(p1.items.size(), 2u);
  ASSERT_FALSE(p1.continue_token.empty());
  EXPECT_EQ(p1.remaining, 3u);
  auto token = decode_continue(p1.continue_token);
  ASSERT_TRUE(token);
  EXPECT_EQ(token->start, "b");  // relative to the namespace, as etcd keys are
  EXPECT_EQ(token->rv, 106u);
  put_pod(s, "default", "f");  // a later write does not change the page's resourceVersion
  lo.cont = *token;
  ListResult p2 = s.list(lo);
  EXPECT_EQ(p2.rv, 106u);
  ASSERT_EQ(p2.items.size(), 2u);
  EXPECT_EQ(meta_string(*parse_json(*p2.items[0]), "name"), "c");
  lo.cont = *decode_continue(p2.continue_token);
  ListResult p3 = s.list(lo);
  ASSERT_EQ(p3.items.size(), 2u);  // e, f
  EXPECT_TRUE(p3.continue_token.empty());
  EXPECT_FALSE(p3.remaining);
}

TEST(StoreTest, AllNamespacePaginationUsesNamespaceSlashNameKeys) {
  Store s(100);
  put_pod(s, "a", "x");
  put_pod(s, "b", "x");
  put_pod(s, "b", "y");
  ListOptions lo;
  lo.resource = kPods;
  lo.limit = 1;
  ListResult p1 = s.list(lo);
  auto token = decode_continue(p1.continue_token);
  ASSERT_TRUE(token);
  EXPECT_EQ(token->start, "a/x");
  lo.cont = *token;
  ListResult p2 = s.list(lo);
  ASSERT_EQ(p2.items.size(), 1u);
  EXPECT_EQ(meta_string(*parse_json(*p2.items[0]), "namespace"), "b");
}

TEST(StoreTest, PaginationWithSelectorOmitsRemainingCount) {
  Store s(100);
  for (const char* n : {"a", "b", "c"}) put_pod(s, "default", n, "web");
  put_pod(s, "default", "d", "db");
  auto labels = *LabelSelector::parse("app=web");
  ListOptions lo;
  lo.resource = kPods;
  lo.labels = &labels;
  lo.limit = 2;
  ListResult p1 = s.list(lo);
  EXPECT_EQ(p1.items.size(), 2u);
  EXPECT_FALSE(p1.continue_token.empty());
  EXPECT_FALSE(p1.remaining);  // the apiserver cannot count matches cheaply either
  lo.cont = *decode_continue(p1.continue_token);
  ListResult p2 = s.list(lo);
  EXPECT_EQ(p2.items.size(), 1u);
  EXPECT_TRUE(p2.continue_token.empty());
}

}  // namespace
}  // namespace yurthub::fake
