// CacheWriter: lists swapped in atomically (across pages), watch events applied in order with
// resourceVersions that never go backwards, and failures that are never silent.
#include "cache/cache_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cache/list_identity.h"
#include "test/cache/cache_test_support.h"

namespace yurthub::cache {
namespace {

using ::testing::ElementsAre;
using namespace yurthub::cache::test_support;

const std::string kPods =
    ListIdentity{"kubelet", "", "v1", "pods", "", "", "spec.nodeName=n1"}.key();

std::vector<CacheOp> a_list(std::uint64_t token, const std::vector<std::string>& names,
                            std::uint64_t rv, bool continuation = false, bool final_page = true,
                            bool complete = true, const std::string& identity = kPods) {
  std::vector<CacheOp> ops;
  CacheOp begin = op(OpKind::ListBegin, identity);
  begin.list_token = token;
  begin.continuation = continuation;
  begin.json = "PodList";
  begin.api_version = "v1";
  ops.push_back(begin);
  for (const auto& name : names) {
    CacheOp item = op(OpKind::ListItem, identity, "default", name, rv,
                      R"({"metadata":{"name":")" + name + "\"}}");
    item.list_token = token;
    ops.push_back(item);
  }
  CacheOp end = op(OpKind::ListEnd, identity);
  end.list_token = token;
  end.resource_version = rv;
  end.final_page = final_page;
  end.complete = complete;
  ops.push_back(end);
  return ops;
}

class CacheWriterTest : public StoreFixture {};

TEST_F(CacheWriterTest, ListReplacesTheSetInOneStep) {
  apply(a_list(1, {"a", "b"}, 10));
  EXPECT_THAT(names(kPods), ElementsAre("default/a", "default/b"));
  auto record = store_->read()->list(kPods);
  ASSERT_TRUE(record);
  EXPECT_TRUE(record->complete);
  EXPECT_EQ(record->resource_version, 10u);
  EXPECT_EQ(record->list_kind, "PodList");

  // A second list without "a": "a" is gone, "c" is there; nothing in between was ever visible.
  auto second = a_list(2, {"b", "c"}, 20);
  auto end = second.back();
  second.pop_back();
  apply(second);
  EXPECT_THAT(names(kPods), ElementsAre("default/a", "default/b"));  // not swapped yet
  apply({end});
  EXPECT_THAT(names(kPods), ElementsAre("default/b", "default/c"));
}

// kubelet lists its pods again after every restart and expired watch, and most are unchanged:
// only what changed is written, and the set still becomes exactly the new list, in one step.
TEST_F(CacheWriterTest, ARelistWritesOnlyWhatChanged) {
  apply(a_list(1, {"a", "b", "c"}, 10));
  const auto set = store_->read()->list(kPods)->set_id;
  auto relist = a_list(2, {"a", "b", "d"}, 10);  // "a" as stored, "c" gone, "d" new
  relist[2].resource_version = 11;               // "b" at a newer version
  relist[2].json = R"({"v":11})";
  auto end = relist.back();
  relist.pop_back();
  apply(relist);
  EXPECT_THAT(names(kPods), ElementsAre("default/a", "default/b", "default/c"));  // not yet
  EXPECT_EQ(*object_json(kPods, "default", "b"), R"({"metadata":{"name":"b"}})");
  apply({end});
  EXPECT_THAT(names(kPods), ElementsAre("default/a", "default/b", "default/d"));
  EXPECT_EQ(*object_json(kPods, "default", "b"), R"({"v":11})");
  auto record = store_->read()->list(kPods);
  EXPECT_EQ(record->set_id, set);  // applied onto the set, not swapped for a new one
  EXPECT_EQ(record->staging_id, 0u);
  EXPECT_EQ(record->resource_version, 11u);
  auto& relisted = metrics_->relisted_objects;
  EXPECT_EQ(relisted.with({"unchanged"}).value(), 1u);
  EXPECT_EQ(relisted.with({"written"}).value(), 2u);  // "b" and "d"
  EXPECT_EQ(relisted.with({"removed"}).value(), 1u);  // "c"

  // Same version, other bytes (an offline edit the cache held): written.
  auto edited = a_list(3, {"a", "b", "d"}, 10);
  edited[2].resource_version = 11;
  edited[2].json = R"({"v":"edited"})";
  apply(edited);
  EXPECT_EQ(*object_json(kPods, "default", "b"), R"({"v":"edited"})");
  EXPECT_EQ(relisted.with({"unchanged"}).value(), 3u);
  EXPECT_EQ(relisted.with({"written"}).value(), 3u);
}

TEST_F(CacheWriterTest, APaginatedRelistIsAppliedWhenItsLastPageArrives) {
  apply(a_list(1, {"a", "b", "c"}, 10));
  auto first = a_list(2, {"a", "x"}, 10, false, /*final_page=*/false);
  apply(first);
  EXPECT_THAT(names(kPods), ElementsAre("default/a", "default/b", "default/c"));
  auto last = a_list(3, {"c"}, 10, /*continuation=*/true, /*final_page=*/true);
  last[1].json = R"({"v":"c2"})";
  apply(last);
  EXPECT_THAT(names(kPods), ElementsAre("default/a", "default/c", "default/x"));
  EXPECT_EQ(*object_json(kPods, "default", "c"), R"({"v":"c2"})");
  EXPECT_EQ(store_->read()->list(kPods)->staging_id, 0u);
}

TEST_F(CacheWriterTest, BrokenListKeepsThePreviousSet) {
  apply(a_list(1, {"a"}, 10));
  apply(a_list(2, {"x", "y"}, 20, false, true, /*complete=*/false));
  EXPECT_THAT(names(kPods), ElementsAre("default/a"));
  EXPECT_EQ(store_->read()->list(kPods)->resource_version, 10u);
  EXPECT_EQ(store_->read()->list(kPods)->staging_id, 0u);
}

TEST_F(CacheWriterTest, PagesAreAssembledNotOverwritten) {
  apply(a_list(1, {"a", "b"}, 30, false, /*final_page=*/false));
  EXPECT_TRUE(names(kPods).empty());  // the first page alone is not a list
  apply(a_list(2, {"c"}, 30, /*continuation=*/true, /*final_page=*/true));
  EXPECT_THAT(names(kPods), ElementsAre("default/a", "default/b", "default/c"));
  EXPECT_TRUE(store_->read()->list(kPods)->complete);
}

TEST_F(CacheWriterTest, APageWithoutItsFirstPageIsNotStored) {
  apply(a_list(1, {"a"}, 10));
  apply(a_list(2, {"z"}, 40, /*continuation=*/true, /*final_page=*/true));
  EXPECT_THAT(names(kPods), ElementsAre("default/a"));
}

TEST_F(CacheWriterTest, WatchEventsApplyInOrderAndNeverGoBack) {
  apply(a_list(1, {"a"}, 10));
  apply({op(OpKind::Upsert, kPods, "default", "b", 11, R"({"v":11})"),
         op(OpKind::Upsert, kPods, "default", "a", 12, R"({"v":12})"),
         op(OpKind::Upsert, kPods, "default", "a", 9, R"({"v":9})"),  // older: ignored
         op(OpKind::Delete, kPods, "default", "b", 13), op(OpKind::Bookmark, kPods, "", "", 15)});
  EXPECT_THAT(names(kPods), ElementsAre("default/a"));
  EXPECT_EQ(*object_json(kPods, "default", "a"), R"({"v":12})");
  EXPECT_EQ(store_->read()->list(kPods)->resource_version, 15u);
  EXPECT_EQ(metrics_->out_of_order.with({}).value(), 1u);
}

TEST_F(CacheWriterTest, TheSameVersionAgainKeepsTheObjectAndNewBytesReplaceIt) {
  const std::string gets = ListIdentity{"kubelet", "", "v1", "pods", "", "", ""}.get_set().key();
  apply({op(OpKind::Upsert, gets, "default", "web-0", 7, R"({"v":1})")});
  // kubelet gets the same pod again: skipped as already stored, and still there.
  apply({op(OpKind::Upsert, gets, "default", "web-0", 7, R"({"v":1})")});
  EXPECT_EQ(*object_json(gets, "default", "web-0"), R"({"v":1})");
  // Same resourceVersion, other bytes (the cache held an offline edit): the apiserver's wins.
  apply({op(OpKind::Upsert, gets, "default", "web-0", 7, R"({"v":2})")});
  EXPECT_EQ(*object_json(gets, "default", "web-0"), R"({"v":2})");
  EXPECT_EQ(store_->read()->list(gets)->resource_version, 7u);
}

TEST_F(CacheWriterTest, GetsGoToTheGetSetAndDiscoveryIsGlobal) {
  const std::string gets = ListIdentity{"kubelet", "", "v1", "nodes", "", "", ""}.get_set().key();
  CacheOp discovery = op(OpKind::Discovery, "");
  discovery.name = "/api";
  discovery.json = R"({"kind":"APIVersions"})";
  apply({op(OpKind::Upsert, gets, "", "edge-1", 5, R"({"kind":"Node"})"), discovery});
  EXPECT_EQ(*object_json(gets, "", "edge-1"), R"({"kind":"Node"})");
  EXPECT_FALSE(store_->read()->list(gets)->complete);  // gets never answer a list
  EXPECT_EQ(*store_->read()->discovery("/api"), R"({"kind":"APIVersions"})");
}

TEST_F(CacheWriterTest, FullQueueRefusesAndStaleMarkStillLands) {
  writer_.reset();
  writer_ = std::make_unique<CacheWriter>(
      *store_, *metrics_, CacheWriter::Options{std::chrono::milliseconds(300), 1024});
  apply(a_list(1, {"a"}, 10));  // first submission always fits an empty queue
  std::vector<CacheOp> big;
  big.push_back(op(OpKind::Upsert, kPods, "default", "huge", 11, std::string(4096, 'x')));
  std::vector<CacheOp> filler;
  filler.push_back(op(OpKind::Upsert, kPods, "default", "f", 11, std::string(512, 'x')));
  ASSERT_TRUE(writer_->submit(std::move(filler)));
  EXPECT_FALSE(writer_->submit(std::move(big)));  // over the bound: refused, not half-queued
  writer_->mark_stale(kPods);
  writer_->flush();
  EXPECT_TRUE(store_->read()->list(kPods)->stale);
}

TEST_F(CacheWriterTest, ARefusedObjectMarksItsListStaleAndFlagsTheTap) {
  auto failed = std::make_shared<std::atomic<bool>>(false);
  CacheOp too_long = op(OpKind::Upsert, kPods, "default", std::string(600, 'n'), 11, "{}");
  too_long.failed = failed;
  apply(a_list(1, {"a"}, 10));
  apply({too_long, op(OpKind::Upsert, kPods, "default", "ok", 12, "{}")});
  EXPECT_TRUE(failed->load());
  EXPECT_TRUE(store_->read()->list(kPods)->stale);
  EXPECT_TRUE(object_json(kPods, "default", "ok").has_value());  // the rest of the batch landed
  // A full list clears the stale mark.
  apply(a_list(2, {"a"}, 20));
  EXPECT_FALSE(store_->read()->list(kPods)->stale);
}

bool renders(const base::MetricsRegistry& registry, const std::string& line) {
  return registry.render().find("\n" + line + "\n") != std::string::npos;
}

TEST_F(CacheWriterTest, ARefusedObjectIsAnErrorKeyUntilItsListIsReplaced) {
  EXPECT_TRUE(renders(registry_, "node_yurthub_error_keys_count 0"));
  EXPECT_TRUE(renders(registry_, "node_yurthub_error_keys_persistency_status 1"));
  apply(a_list(1, {"a"}, 10));
  const std::string long_name(600, 'n');
  apply({op(OpKind::Upsert, kPods, "default", long_name, 11, "{}"),
         op(OpKind::Upsert, kPods, "default", "ok", 12, "{}")});
  EXPECT_EQ(metrics_->error_keys.size(), 1u);
  EXPECT_TRUE(renders(registry_, "node_yurthub_error_keys_count 1")) << registry_.render();
  // The commit itself succeeded.
  EXPECT_TRUE(renders(registry_, "node_yurthub_error_keys_persistency_status 1"));
  const std::string summary = metrics_->error_keys.summary();
  EXPECT_NE(summary.find("1 cached objects could not be written: kubelet pods default/nnn"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("cannot store object"), std::string::npos) << summary;
  // A later write of another object does not clear it; a complete list without it does.
  apply({op(OpKind::Upsert, kPods, "default", "ok", 13, "{}")});
  EXPECT_EQ(metrics_->error_keys.size(), 1u);
  apply(a_list(2, {"a"}, 20));
  EXPECT_EQ(metrics_->error_keys.size(), 0u);
  EXPECT_TRUE(renders(registry_, "node_yurthub_error_keys_count 0"));
}

TEST_F(CacheWriterTest, AFailedCommitIsNotPersistedUntilTheNextCommitSucceeds) {
  writer_.reset();
  store_.reset();
  auto small = open_lmdb_store({dir_ + "/small", 1u << 20, false});
  ASSERT_TRUE(small);
  store_ = std::move(*small);
  writer_ = std::make_unique<CacheWriter>(*store_, *metrics_,
                                          CacheWriter::Options{std::chrono::milliseconds(1)});
  const std::string huge(2u << 20, 'x');  // twice the map: no eviction makes room
  apply({op(OpKind::Upsert, kPods, "default", "huge", 10, R"({"data":")" + huge + R"("})")});
  EXPECT_EQ(metrics_->error_keys.size(), 1u);
  EXPECT_FALSE(metrics_->error_keys.persisted());
  EXPECT_TRUE(renders(registry_, "node_yurthub_error_keys_persistency_status 0"));
  EXPECT_NE(metrics_->error_keys.summary().find("the last commit of the cache failed"),
            std::string::npos);
  apply({op(OpKind::Upsert, kPods, "default", "small", 11, "{}")});
  EXPECT_TRUE(metrics_->error_keys.persisted());
  EXPECT_EQ(metrics_->error_keys.size(), 1u);  // "huge" is still not in the cache
  // Written again, smaller: no longer an error key.
  apply({op(OpKind::Upsert, kPods, "default", "huge", 12, "{}")});
  EXPECT_EQ(metrics_->error_keys.size(), 0u);
}

TEST_F(CacheWriterTest, UnfinishedListsAreDroppedOnRestart) {
  apply(a_list(1, {"a"}, 10));
  auto half = a_list(2, {"b"}, 20);
  half.pop_back();  // the hub "dies" before the list ends
  apply(half);
  const auto staging = store_->read()->list(kPods)->staging_id;
  ASSERT_NE(staging, 0u);
  writer_.reset();
  writer_ = std::make_unique<CacheWriter>(*store_, *metrics_, CacheWriter::Options{});
  auto record = store_->read()->list(kPods);
  EXPECT_EQ(record->staging_id, 0u);
  bool any = false;
  store_->read()->scan(staging, "", "", "", [&](auto, auto, const auto&) { return !(any = true); });
  EXPECT_FALSE(any);
  EXPECT_THAT(names(kPods), ElementsAre("default/a"));
}

// Every selector of every component is a list of its own: past the bound the least recently
// written lists go, so the cache cannot grow without end.
TEST_F(CacheWriterTest, PastTheBoundTheLeastRecentlyWrittenListsGo) {
  CacheWriter::Options bounded;
  bounded.commit_interval = std::chrono::milliseconds(1);
  bounded.max_lists = 3;
  bounded.size_refresh_interval = std::chrono::milliseconds(0);
  writer_ = std::make_unique<CacheWriter>(*store_, *metrics_, bounded);
  auto selector = [](int i) {
    return ListIdentity{"kubelet", "", "v1", "pods", "", "app=a" + std::to_string(i), ""}.key();
  };
  auto list = [&](int i) {
    apply(a_list(static_cast<std::uint64_t>(i) + 1, {"p" + std::to_string(i)}, 10, false, true,
                 true, selector(i)));
  };
  for (int i = 0; i < 3; ++i) list(i);
  // Writing to the oldest makes it recent again; then two more lists push two out.
  apply({op(OpKind::Upsert, selector(0), "default", "p0b", 11, R"({"metadata":{"name":"p0b"}})")});
  list(3);
  list(4);
  auto view = store_->read();
  EXPECT_TRUE(view->list(selector(0)));
  EXPECT_FALSE(view->list(selector(1)));
  EXPECT_FALSE(view->list(selector(2)));
  EXPECT_TRUE(view->list(selector(3)));
  EXPECT_TRUE(view->list(selector(4)));
  view.reset();
  EXPECT_THAT(names(selector(0)), ElementsAre("default/p0", "default/p0b"));
  EXPECT_THAT(names(selector(4)), ElementsAre("default/p4"));
  EXPECT_NE(registry_.render().find(R"(node_yurthub_cache_evicted_lists_total{reason="count"} 2)"),
            std::string::npos);
}

TEST_F(CacheWriterTest, NearAFullMapTheLeastRecentlyWrittenListsGo) {
  writer_.reset();
  store_.reset();
  auto small = open_lmdb_store({dir_ + "/small", 4u << 20, false});
  ASSERT_TRUE(small);
  store_ = std::move(*small);
  CacheWriter::Options bounded;
  bounded.commit_interval = std::chrono::milliseconds(1);
  bounded.size_refresh_interval = std::chrono::milliseconds(0);
  writer_ = std::make_unique<CacheWriter>(*store_, *metrics_, bounded);
  const std::string big(200 * 1024, 'x');
  for (int i = 0; i < 30; ++i) {
    const std::string identity =
        ListIdentity{"kubelet", "", "v1", "configmaps", "", "n=" + std::to_string(i), ""}.key();
    CacheOp item =
        op(OpKind::Upsert, identity, "default", "cm" + std::to_string(i), 10,
           R"({"metadata":{"name":"cm)" + std::to_string(i) + R"("},"data":")" + big + R"("})");
    apply({item});
  }
  const StoreStats stats = store_->stats();
  EXPECT_LE(stats.used_bytes, stats.map_size * 9 / 10) << stats.used_bytes;
  for (const char* reason : {"commit", "full"}) {
    EXPECT_EQ(
        registry_.render().find(std::string("node_yurthub_cache_write_failures_total{reason=\"") +
                                reason + "\"}"),
        std::string::npos)
        << registry_.render();
  }
  EXPECT_NE(registry_.render().find(R"(node_yurthub_cache_evicted_lists_total{reason="size"})"),
            std::string::npos);
  // The newest is there.
  EXPECT_THAT(names(ListIdentity{"kubelet", "", "v1", "configmaps", "", "n=29", ""}.key()),
              ElementsAre("default/cm29"));
}

}  // namespace
}  // namespace yurthub::cache
