// Tests for cache/lmdb_store.cc through the Store interface, each in its own temp directory:
// object put/get/scan (order, namespace filter, resumption), drop_set, list records, discovery,
// the journal database, set ids across reopen, abort on error, snapshot isolation, values read in
// a write transaction, and MDB_MAP_FULL. Opening, permissions, format and crash consistency are
// in lmdb_store_open_test.cc.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test/cache/lmdb_store_test_support.h"

namespace yurthub::cache {
namespace {

using namespace store_test;

TEST_F(LmdbStoreTest, ScanVisitsOneSetInNamespaceNameOrder) {
  put_objects(256, {{"a", "other-set"}});  // big-endian set ids: 256 sorts after 1, not before 2
  put_objects(2, {{"a", "set-two"}});
  put_objects(1, {{"b", "pod-1"},
                  {"a", "pod-2"},
                  {"a", "pod-10"},
                  {"ab", "pod-1"},
                  {"", "node-1"},
                  {"a", "pod-1"}});
  auto view = store_->read();
  EXPECT_EQ(scan_all(*view, 1),
            (std::vector<std::string>{
                "/node-1@1={\"name\":\"node-1\"}", "a/pod-1@1={\"name\":\"pod-1\"}",
                "a/pod-10@1={\"name\":\"pod-10\"}", "a/pod-2@1={\"name\":\"pod-2\"}",
                "ab/pod-1@1={\"name\":\"pod-1\"}", "b/pod-1@1={\"name\":\"pod-1\"}"}));
  EXPECT_EQ(scan_all(*view, 256),
            (std::vector<std::string>{"a/other-set@1={\"name\":\"other-set\"}"}));
  EXPECT_TRUE(scan_all(*view, 3).empty());
}

TEST_F(LmdbStoreTest, ScanFiltersNamespaceAndResumesAfterAKey) {
  put_objects(1, {{"a", "p1"}, {"a", "p2"}, {"a", "p3"}, {"ab", "p1"}, {"b", "p1"}, {"", "n1"}});
  auto view = store_->read();
  auto names = [&](std::string_view ns, std::string_view after_ns, std::string_view after_name,
                   std::size_t limit = 1000) {
    std::vector<std::string> out;
    for (const std::string& line : scan_all(*view, 1, ns, after_ns, after_name, limit)) {
      out.push_back(line.substr(0, line.find('@')));
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names("a", "", ""), (V{"a/p1", "a/p2", "a/p3"}));  // not "ab"
  EXPECT_EQ(names("ab", "", ""), (V{"ab/p1"}));
  EXPECT_EQ(names("zz", "", ""), V{});
  EXPECT_EQ(names("", "a", "p2"), (V{"a/p3", "ab/p1", "b/p1"}));   // strictly after
  EXPECT_EQ(names("", "a", "p25"), (V{"a/p3", "ab/p1", "b/p1"}));  // after a missing key
  EXPECT_EQ(names("", "", "n1"), (V{"a/p1", "a/p2", "a/p3", "ab/p1", "b/p1"}));
  EXPECT_EQ(names("a", "a", "p1"), (V{"a/p2", "a/p3"}));
  EXPECT_EQ(names("a", "a", "p3"), V{});
  EXPECT_EQ(names("b", "a", "zzz"), (V{"b/p1"}));       // resume point before the namespace
  EXPECT_EQ(names("a", "b", "p0"), V{});                // resume point after the namespace
  EXPECT_EQ(names("", "", "", 2), (V{"/n1", "a/p1"}));  // visit returning false stops
}

TEST_F(LmdbStoreTest, ObjectGetOverwriteDelete) {
  ASSERT_TRUE(store_
                  ->write([](WriteTxn& txn) -> Status {
                    if (Status s = txn.put_object(7, "default", "web", 10, R"({"v":1})"); !s)
                      return s;
                    if (Status s = txn.put_object(7, "default", "web", 12, R"({"v":2})"); !s)
                      return s;
                    if (Status s = txn.put_object(7, "", "node-1", 3, ""); !s) return s;
                    return txn.put_object(7, "default", "gone", 1, "{}");
                  })
                  .ok());
  ASSERT_TRUE(
      store_->write([](WriteTxn& txn) { return txn.delete_object(7, "default", "gone"); }).ok());
  // Deleting what is not there is not an error.
  ASSERT_TRUE(
      store_->write([](WriteTxn& txn) { return txn.delete_object(7, "default", "never"); }).ok());
  auto view = store_->read();
  auto web = view->object(7, "default", "web");
  ASSERT_TRUE(web.has_value());
  EXPECT_EQ(web->resource_version, 12u);
  EXPECT_EQ(web->json, R"({"v":2})");
  auto node = view->object(7, "", "node-1");
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->json, "");
  EXPECT_FALSE(view->object(7, "default", "gone").has_value());
  EXPECT_FALSE(view->object(8, "default", "web").has_value());
  EXPECT_FALSE(view->object(7, "other", "web").has_value());
  EXPECT_EQ(store_->stats().objects, 2u);
}

TEST_F(LmdbStoreTest, DropSetDeletesOnlyThatSet) {
  std::vector<std::pair<std::string, std::string>> many;
  for (int i = 0; i < 500; ++i)
    many.emplace_back("ns-" + std::to_string(i % 7), "obj-" + std::to_string(i));
  put_objects(1, {{"a", "keep"}});
  put_objects(2, many);
  put_objects(3, {{"", "keep-too"}});
  ASSERT_EQ(store_->stats().objects, 502u);
  Status status = store_->write([](WriteTxn& txn) { return txn.drop_set(2); });
  ASSERT_TRUE(status.ok()) << message(status);
  ASSERT_TRUE(store_->write([](WriteTxn& txn) { return txn.drop_set(9); }).ok());  // empty set
  auto view = store_->read();
  EXPECT_TRUE(scan_all(*view, 2).empty());
  EXPECT_EQ(scan_all(*view, 1).size(), 1u);
  EXPECT_EQ(scan_all(*view, 3).size(), 1u);
  EXPECT_EQ(store_->stats().objects, 2u);
}

TEST_F(LmdbStoreTest, ListRecordsRoundTripEveryField) {
  ListRecord record;
  record.set_id = 0xfedcba98;
  record.staging_id = 42;
  record.resource_version = 0x123456789abcdef0ull;
  record.complete = true;
  record.stale = true;
  record.synced_unix = -5;  // negative survives the encoding
  record.list_kind = "EndpointSliceList";
  record.api_version = "discovery.k8s.io/v1";
  ListRecord other;
  other.resource_version = 1;
  const ListIdentity pods = pods_identity();
  const ListIdentity leases{"kubelet", "coordination.k8s.io", "v1", "leases", "kube-node-lease", "",
                            ""};
  const ListIdentity proxy{
      "kube-proxy", "", "v1", "services", "", "!service.kubernetes.io/headless", ""};
  ASSERT_TRUE(store_
                  ->write([&](WriteTxn& txn) -> Status {
                    if (Status s = txn.put_list(pods.key(), record); !s) return s;
                    if (Status s = txn.put_list(leases.key(), other); !s) return s;
                    return txn.put_list(proxy.key(), other);
                  })
                  .ok());
  auto view = store_->read();
  EXPECT_EQ(view->list(pods.key()), record);
  EXPECT_EQ(view->list(leases.key()), other);
  EXPECT_FALSE(view->list(pods.get_set().key()).has_value());
  auto kubelet = view->lists_with_prefix(ListIdentity::component_prefix("kubelet"));
  ASSERT_EQ(kubelet.size(), 2u);
  EXPECT_EQ(kubelet[0].first, pods.key());  // "" group sorts before "coordination.k8s.io"
  EXPECT_EQ(kubelet[0].second, record);
  EXPECT_EQ(kubelet[1].first, leases.key());
  EXPECT_EQ(view->lists_with_prefix("").size(), 3u);
  EXPECT_EQ(
      view->lists_with_prefix(ListIdentity::resource_prefix("kubelet", "", "v1", "pods")).size(),
      1u);
  EXPECT_TRUE(view->lists_with_prefix(ListIdentity::component_prefix("kube")).empty());
  view.reset();
  ASSERT_TRUE(store_->write([&](WriteTxn& txn) { return txn.delete_list(pods.key()); }).ok());
  EXPECT_FALSE(store_->read()->list(pods.key()).has_value());
  EXPECT_EQ(store_->stats().lists, 2u);
}

TEST_F(LmdbStoreTest, DiscoveryDocuments) {
  ASSERT_TRUE(store_
                  ->write([](WriteTxn& txn) -> Status {
                    if (Status s = txn.put_discovery("/version", R"({"major":"1"})"); !s) return s;
                    if (Status s = txn.put_discovery("/api/v1", "old"); !s) return s;
                    return txn.put_discovery("/api/v1", R"({"kind":"APIResourceList"})");
                  })
                  .ok());
  auto view = store_->read();
  EXPECT_EQ(view->discovery("/version"), R"({"major":"1"})");
  EXPECT_EQ(view->discovery("/api/v1"), R"({"kind":"APIResourceList"})");
  EXPECT_FALSE(view->discovery("/apis").has_value());
  EXPECT_FALSE(view->discovery("").has_value());
}

TEST_F(LmdbStoreTest, SetIdsAreNeverReusedAcrossReopen) {
  std::vector<std::uint32_t> ids;
  auto allocate = [&](int count) {
    ASSERT_TRUE(store_
                    ->write([&](WriteTxn& txn) -> Status {
                      for (int i = 0; i < count; ++i) {
                        auto id = txn.allocate_set();
                        if (!id) return id.error();
                        ids.push_back(*id);
                      }
                      return {};
                    })
                    .ok());
  };
  allocate(3);
  store_.reset();
  store_ = must_open(options());
  ASSERT_NE(store_, nullptr);
  allocate(2);
  EXPECT_EQ(ids, (std::vector<std::uint32_t>{1, 2, 3, 4, 5}));  // never 0 ("no set")
}

TEST_F(LmdbStoreTest, ErrorAbortsTheWholeTransaction) {
  Status status = store_->write([](WriteTxn& txn) -> Status {
    (void)txn.allocate_set();
    (void)txn.put_object(1, "default", "web", 1, "{}");
    (void)txn.put_list(pods_identity().key(), ListRecord{});
    (void)txn.put_discovery("/version", "{}");
    return make_error("caller gave up");
  });
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, "caller gave up");
  auto view = store_->read();
  EXPECT_FALSE(view->object(1, "default", "web").has_value());
  EXPECT_FALSE(view->list(pods_identity().key()).has_value());
  EXPECT_FALSE(view->discovery("/version").has_value());
  EXPECT_EQ(store_->stats().objects, 0u);
}

TEST_F(LmdbStoreTest, WriteInsideWriteIsAnErrorNotADeadlock) {
  Status inner;
  ASSERT_TRUE(store_
                  ->write([&](WriteTxn&) -> Status {
                    inner = store_->write([](WriteTxn&) -> Status { return {}; });
                    return {};
                  })
                  .ok());
  EXPECT_FALSE(inner.ok());
}

TEST_F(LmdbStoreTest, ReadViewIsASnapshot) {
  put_objects(1, {{"a", "p1"}}, 1);
  auto before = store_->read();
  auto before_json = before->object(1, "a", "p1")->json;
  ASSERT_TRUE(store_
                  ->write([](WriteTxn& txn) -> Status {
                    if (Status s = txn.put_object(1, "a", "p1", 2, R"({"new":true})"); !s) return s;
                    if (Status s = txn.put_object(1, "a", "p2", 2, "{}"); !s) return s;
                    ListRecord record;
                    record.set_id = 1;
                    record.resource_version = 2;
                    return txn.put_list(pods_identity().key(), record);
                  })
                  .ok());
  auto after = store_->read();
  EXPECT_EQ(before->object(1, "a", "p1")->resource_version, 1u);
  EXPECT_EQ(before_json, R"({"name":"p1"})");  // still points at the old version's bytes
  EXPECT_EQ(scan_all(*before, 1).size(), 1u);
  EXPECT_FALSE(before->list(pods_identity().key()).has_value());
  EXPECT_EQ(after->object(1, "a", "p1")->resource_version, 2u);
  EXPECT_EQ(scan_all(*after, 1).size(), 2u);
  EXPECT_TRUE(after->list(pods_identity().key()).has_value());
}

TEST_F(LmdbStoreTest, ValuesReadInAWriteTxnStayValidAcrossLaterWrites) {
  put_objects(1, {{"a", "p1"}});
  ASSERT_TRUE(store_
                  ->write([](WriteTxn& txn) -> Status {
                    auto first = txn.object(1, "a", "p1");
                    EXPECT_TRUE(first.has_value());
                    for (int i = 0; i < 300;
                         ++i) {  // page splits and copy-on-write of the page p1 was on
                      if (Status s = txn.put_object(1, "a", "q" + std::to_string(i), 1,
                                                    std::string(300, 'x'));
                          !s)
                        return s;
                    }
                    if (Status s = txn.put_object(1, "a", "p1", 2, "{}"); !s) return s;
                    EXPECT_EQ(first->json, R"({"name":"p1"})");
                    return {};
                  })
                  .ok());
}

// The writer compares each list item and watch event with what is stored, and a relist finds
// what it no longer names, without copying values out of the map.
TEST_F(LmdbStoreTest, AWriteTxnPeeksAtObjectsAndScansNamesOfOneSet) {
  put_objects(1, {{"b", "p1"}, {"", "n1"}, {"a", "p2"}, {"a", "p1"}});
  put_objects(2, {{"a", "other"}});
  ASSERT_TRUE(store_
                  ->write([](WriteTxn& txn) -> Status {
                    auto peeked = txn.peek_object(1, "a", "p2");
                    EXPECT_TRUE(peeked.has_value());
                    if (peeked) {
                      EXPECT_EQ(peeked->resource_version, 1u);
                      EXPECT_EQ(peeked->json, R"({"name":"p2"})");
                    }
                    EXPECT_FALSE(txn.peek_object(1, "a", "other").has_value());
                    EXPECT_FALSE(txn.peek_object(1, std::string("a\0p", 3), "1").has_value());
                    std::vector<std::string> names;
                    txn.scan_names(1, [&](std::string_view ns, std::string_view name) {
                      names.push_back(std::string(ns) + "/" + std::string(name));
                      return names.size() < 3;
                    });
                    EXPECT_EQ(names, (std::vector<std::string>{"/n1", "a/p1", "a/p2"}));
                    names.clear();
                    txn.scan_names(3, [&](std::string_view, std::string_view) {
                      names.emplace_back();
                      return true;
                    });
                    EXPECT_TRUE(names.empty());
                    return {};
                  })
                  .ok());
}

TEST_F(LmdbStoreTest, ScanInAWriteTxnToleratesDeletingWhatItVisits) {
  std::vector<std::pair<std::string, std::string>> many;
  for (int i = 0; i < 200; ++i) many.emplace_back("ns", "obj-" + std::to_string(1000 + i));
  put_objects(1, many);
  int visited = 0;
  ASSERT_TRUE(store_
                  ->write([&](WriteTxn& txn) -> Status {
                    Status result;
                    txn.scan(1, "", "", "",
                             [&](std::string_view ns, std::string_view name, const StoredObject&) {
                               ++visited;
                               if (visited % 2 == 0) result = txn.delete_object(1, ns, name);
                               return result.ok();
                             });
                    return result;
                  })
                  .ok());
  EXPECT_EQ(visited, 200);
  EXPECT_EQ(store_->stats().objects, 100u);
}

TEST_F(LmdbStoreTest, MapFullIsAnErrorAndTheStoreStaysUsable) {
  store_.reset();
  store_ = must_open(options(false, 256 << 10));
  ASSERT_NE(store_, nullptr);
  const std::string big(8000, 'x');
  Status status;
  int committed = 0;
  for (; committed < 200; ++committed) {
    status = store_->write([&](WriteTxn& txn) {
      return txn.put_object(1, "ns", "obj-" + std::to_string(1000 + committed), 1, big);
    });
    if (!status) break;
  }
  ASSERT_FALSE(status.ok()) << "a 256 KiB map never filled up";
  EXPECT_NE(status.error().message.find("MDB_MAP_FULL"), std::string::npos)
      << status.error().message;
  // The cache writer counts it as the cache being full, not as a broken disk.
  EXPECT_EQ(status.error().code, ErrorCode::ResourceExhausted);
  ASSERT_GT(committed, 0);
  // A caller that ignores the failed put still gets the error from write(), and nothing commits.
  Status ignored = store_->write([&](WriteTxn& txn) -> Status {
    (void)txn.put_object(2, "ns", "a", 1, big + big);
    (void)txn.put_object(2, "ns", "b", 1, "{}");
    return {};
  });
  EXPECT_FALSE(ignored.ok());
  {
    auto view = store_->read();
    EXPECT_EQ(scan_all(*view, 1).size(), static_cast<std::size_t>(committed));
    EXPECT_TRUE(scan_all(*view, 2).empty());
  }
  // Deleting frees space. LMDB reuses pages a commit freed only after one more commit (the
  // previous meta page still references them), so a small write goes first.
  status = store_->write([](WriteTxn& txn) { return txn.drop_set(1); });
  ASSERT_TRUE(status.ok()) << message(status);
  status = store_->write([&](WriteTxn& txn) { return txn.put_object(3, "ns", "small", 1, "{}"); });
  ASSERT_TRUE(status.ok()) << message(status);
  for (int i = 0; i < committed - 2; ++i) {
    status = store_->write(
        [&](WriteTxn& txn) { return txn.put_object(3, "ns", "big-" + std::to_string(i), 1, big); });
    ASSERT_TRUE(status.ok()) << i << ": " << message(status);
  }
  store_.reset();
  store_ = must_open(options(false, 256 << 10));
  ASSERT_NE(store_, nullptr);
  auto view = store_->read();
  EXPECT_TRUE(scan_all(*view, 1).empty());
  EXPECT_EQ(scan_all(*view, 3).size(), static_cast<std::size_t>(committed - 1));
}

TEST_F(LmdbStoreTest, JournalEntriesScanInSequenceOrderAndDelete) {
  Status status = store_->write([](WriteTxn& txn) -> Status {
    for (std::uint64_t seq : {300u, 2u, 1000u}) {
      if (Status s = txn.put_journal(seq, "entry-" + std::to_string(seq)); !s) return s;
    }
    return txn.delete_journal(300);
  });
  ASSERT_TRUE(status.ok()) << message(status);
  std::vector<std::string> seen;
  store_->read()->scan_journal([&](std::uint64_t seq, std::string_view entry) {
    seen.push_back(std::to_string(seq) + "=" + std::string(entry));
    return true;
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"2=entry-2", "1000=entry-1000"}));
  EXPECT_EQ(store_->stats().journal_entries, 2u);
  // Still there after a reopen, for a read-only reader too.
  store_.reset();
  auto reader = must_open(options(/*read_only=*/true));
  ASSERT_NE(reader, nullptr);
  std::size_t entries = 0;
  reader->read()->scan_journal([&](std::uint64_t, std::string_view) { return ++entries < 10; });
  EXPECT_EQ(entries, 2u);
}

}  // namespace
}  // namespace yurthub::cache
