// Tests for cache/lmdb_store.cc through the Store interface, each in its own temp directory:
// object put/get/scan (order, namespace filter, resumption), drop_set, list records, discovery,
// set ids across reopen, abort on error, snapshot isolation, values read in a write transaction,
// MDB_MAP_FULL, read-only opening, permissions, format version, oversized keys, double opening,
// and crash consistency (a writer process killed with SIGKILL at random points).
#include "cache/lmdb_store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "cache/list_identity.h"
#include "cache/store.h"

namespace yurthub::cache {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "lmdb_store_test.XXXXXX").string();
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string message(const Status& status) { return status.ok() ? "ok" : status.error().message; }

std::unique_ptr<Store> must_open(const StoreOptions& options) {
  auto store = open_lmdb_store(options);
  EXPECT_TRUE(store.ok()) << store.error().message;
  return store.ok() ? std::move(*store) : nullptr;
}

// "ns/name@rv=json" for every object of `set` the scan visits.
std::vector<std::string> scan_all(ReadView& view, std::uint32_t set, std::string_view ns = "",
                                  std::string_view after_ns = "", std::string_view after_name = "",
                                  std::size_t limit = 1000) {
  std::vector<std::string> out;
  view.scan(set, ns, after_ns, after_name,
            [&](std::string_view n, std::string_view name, const StoredObject& object) {
              out.push_back(std::string(n) + "/" + std::string(name) + "@" +
                            std::to_string(object.resource_version) + "=" +
                            std::string(object.json));
              return out.size() < limit;
            });
  return out;
}

ListIdentity pods_identity() {
  return ListIdentity{"kubelet", "", "v1", "pods", "", "", "spec.nodeName=node-1"};
}

class LmdbStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    dir_ = tmp_.path() + "/cache";
    store_ = must_open(options());
    ASSERT_NE(store_, nullptr);
  }
  StoreOptions options(bool read_only = false, std::uint64_t map_size = 64ull << 20) const {
    StoreOptions options;
    options.directory = dir_;
    options.map_size = map_size;
    options.read_only = read_only;
    return options;
  }
  void put_objects(std::uint32_t set, const std::vector<std::pair<std::string, std::string>>& keys,
                   std::uint64_t rv = 1) {
    Status status = store_->write([&](WriteTxn& txn) -> Status {
      for (const auto& [ns, name] : keys) {
        Status put = txn.put_object(set, ns, name, rv, "{\"name\":\"" + name + "\"}");
        if (!put) return put;
      }
      return {};
    });
    ASSERT_TRUE(status.ok()) << message(status);
  }

  TempDir tmp_;
  std::string dir_;
  std::unique_ptr<Store> store_;
};

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

TEST_F(LmdbStoreTest, ReadOnlyOpenReadsAndRefusesWrites) {
  put_objects(1, {{"a", "p1"}});
  store_.reset();
  auto store = must_open(options(/*read_only=*/true));
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->read()->object(1, "a", "p1")->json, R"({"name":"p1"})");
  EXPECT_EQ(store->stats().objects, 1u);
  Status status = store->write([](WriteTxn&) -> Status { return {}; });
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("read-only"), std::string::npos);
}

TEST_F(LmdbStoreTest, ReadOnlyOpenCreatesNothing) {
  StoreOptions missing = options(true);
  missing.directory = tmp_.path() + "/missing";
  EXPECT_FALSE(open_lmdb_store(missing).ok());
  EXPECT_FALSE(fs::exists(missing.directory));
  StoreOptions empty = options(true);
  empty.directory = tmp_.path() + "/empty";
  ASSERT_TRUE(fs::create_directory(empty.directory));
  auto store = open_lmdb_store(empty);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find(empty.directory), std::string::npos)
      << store.error().message;
  EXPECT_TRUE(fs::is_empty(empty.directory));
}

TEST_F(LmdbStoreTest, DirectoryIs0700AndFiles0600) {
  auto mode = [](const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  };
  EXPECT_EQ(mode(dir_), 0700u);
  EXPECT_EQ(mode(dir_ + "/data.mdb"), 0600u);
  EXPECT_EQ(mode(dir_ + "/lock.mdb"), 0600u);
  // Parents are created too; an existing directory keeps its mode.
  StoreOptions nested = options();
  nested.directory = tmp_.path() + "/x/y/cache/";
  EXPECT_NE(must_open(nested), nullptr);
  EXPECT_EQ(mode(tmp_.path() + "/x/y/cache"), 0700u);
  StoreOptions loose = options();
  loose.directory = tmp_.path() + "/loose";
  ASSERT_EQ(::mkdir(loose.directory.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(loose.directory.c_str(), 0755), 0);
  EXPECT_NE(must_open(loose), nullptr);
  EXPECT_EQ(mode(loose.directory), 0755u);
  EXPECT_EQ(mode(loose.directory + "/data.mdb"), 0600u);
}

TEST_F(LmdbStoreTest, NewerFormatVersionRefusesToOpen) {
  store_.reset();
  Status status = write_format_version_for_testing(dir_, kStoreFormatVersion + 1);
  ASSERT_TRUE(status.ok()) << message(status);
  for (bool read_only : {false, true}) {
    auto store = open_lmdb_store(options(read_only));
    ASSERT_FALSE(store.ok());
    EXPECT_NE(store.error().message.find("format version 2, newer than"), std::string::npos)
        << store.error().message;
  }
  ASSERT_TRUE(write_format_version_for_testing(dir_, kStoreFormatVersion).ok());
  EXPECT_NE(must_open(options()), nullptr);
}

TEST_F(LmdbStoreTest, OversizedKeysAreErrorsAndTheTransactionGoesOn) {
  const std::string long_name = "pod-" + std::string(600, 'n');
  Status too_long, list_too_long, discovery_too_long;
  ASSERT_TRUE(store_
                  ->write([&](WriteTxn& txn) -> Status {
                    too_long = txn.put_object(1, "default", long_name, 1, "{}");
                    ListIdentity identity = pods_identity();
                    identity.label_selector = "app=" + std::string(600, 'a');
                    list_too_long = txn.put_list(identity.key(), ListRecord{});
                    discovery_too_long = txn.put_discovery("/apis/" + std::string(600, 'g'), "{}");
                    return txn.put_object(1, "default", "short", 1, "{}");
                  })
                  .ok());
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.error().message.find("default/" + long_name), std::string::npos);
  EXPECT_NE(too_long.error().message.find("maximum key size (511)"), std::string::npos);
  EXPECT_FALSE(list_too_long.ok());
  EXPECT_FALSE(discovery_too_long.ok());
  auto view = store_->read();
  EXPECT_EQ(scan_all(*view, 1).size(), 1u);
  EXPECT_FALSE(view->object(1, "default", long_name).has_value());
}

TEST_F(LmdbStoreTest, OpeningTwiceInOneProcessIsRefusedAndViewsOutliveTheStore) {
  auto second = open_lmdb_store(options(true));
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("already open"), std::string::npos);
  put_objects(1, {{"a", "p1"}});
  auto view = store_->read();
  store_.reset();
  EXPECT_EQ(view->object(1, "a", "p1")->json, R"({"name":"p1"})");
  EXPECT_FALSE(open_lmdb_store(options()).ok());  // the view keeps the environment open
  view.reset();
  EXPECT_NE(must_open(options()), nullptr);
}

TEST_F(LmdbStoreTest, OpenFailuresNameTheDirectory) {
  StoreOptions file = options();
  file.directory = tmp_.path() + "/a-file";
  {
    std::FILE* f = std::fopen(file.directory.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  auto store = open_lmdb_store(file);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find(file.directory), std::string::npos);
  StoreOptions garbage = options();
  garbage.directory = tmp_.path() + "/garbage";
  ASSERT_TRUE(fs::create_directory(garbage.directory));
  {
    std::FILE* f = std::fopen((garbage.directory + "/data.mdb").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(std::string(8192, 'z').c_str(), f);
    std::fclose(f);
  }
  store = open_lmdb_store(garbage);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find(garbage.directory), std::string::npos)
      << store.error().message;
}

// ---- crash consistency
// ---------------------------------------------------------------------------

constexpr int kCrashObjects = 40;
const char* const kCrashList = "crash-test";

std::string crash_json(std::uint64_t seq, int index) {
  // Varying sizes move objects between pages and into overflow pages from one commit to the next.
  const std::size_t pad = (seq * 7919 + static_cast<std::uint64_t>(index) * 104729) % 6000;
  return "{\"seq\":" + std::to_string(seq) + ",\"pad\":\"" + std::string(pad, 'p') + "\"}";
}

// One committed transaction: every object of a set carries `seq`, and so does the list record.
// Every fifth transaction moves to a new set and drops the old one, as a relist does.
Status write_generation(Store& store, std::uint64_t seq, std::uint32_t& set) {
  std::uint32_t target = set;
  Status status = store.write([&](WriteTxn& txn) -> Status {
    if (set == 0 || seq % 5 == 0) {
      auto id = txn.allocate_set();
      if (!id) return id.error();
      if (set != 0) {
        if (Status s = txn.drop_set(set); !s) return s;
      }
      target = *id;
    }
    for (int i = 0; i < kCrashObjects; ++i) {
      Status s = txn.put_object(target, "ns-" + std::to_string(i % 3), "obj-" + std::to_string(i),
                                seq, crash_json(seq, i));
      if (!s) return s;
    }
    ListRecord record;
    record.set_id = target;
    record.resource_version = seq;
    record.complete = true;
    return txn.put_list(kCrashList, record);
  });
  if (status) set = target;
  return status;
}

// The child: writes generations forever, reporting each committed sequence number on `fd`.
[[noreturn]] void crash_writer(const std::string& dir, int fd) {
  StoreOptions options;
  options.directory = dir;
  auto store = open_lmdb_store(options);
  if (!store) ::_exit(10);
  std::uint64_t seq = 0;
  std::uint32_t set = 0;
  if (auto record = (*store)->read()->list(kCrashList)) {
    seq = record->resource_version;
    set = record->set_id;
  }
  for (;;) {
    ++seq;
    if (!write_generation(**store, seq, set)) ::_exit(11);
    if (::write(fd, &seq, sizeof seq) != sizeof seq) ::_exit(12);
  }
}

// What a restarted hub (or `yurthub cache` while the writer runs) must see: exactly one whole
// generation, at least as new as the last one the writer reported committed.
void expect_one_whole_generation(Store& store, std::uint64_t at_least) {
  auto view = store.read();
  auto record = view->list(kCrashList);
  if (at_least == 0 && !record) return;
  ASSERT_TRUE(record.has_value());
  EXPECT_GE(record->resource_version, at_least);
  int count = 0;
  view->scan(record->set_id, "", "", "",
             [&](std::string_view, std::string_view name, const StoredObject& object) {
               const int index = std::stoi(std::string(name.substr(4)));
               EXPECT_EQ(object.resource_version, record->resource_version) << name;
               EXPECT_EQ(object.json, crash_json(record->resource_version, index)) << name;
               ++count;
               return true;
             });
  EXPECT_EQ(count, kCrashObjects);
}

bool read_seq(int fd, std::uint64_t* seq) {
  std::size_t got = 0;
  auto* bytes = reinterpret_cast<char*>(seq);
  while (got < sizeof *seq) {
    const ssize_t n = ::read(fd, bytes + got, sizeof *seq - got);
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

TEST_F(LmdbStoreTest, SigkilledWriterLeavesTheLastCommittedTransaction) {
  store_.reset();  // the parent holds no environment across fork()
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 random(seed);
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      crash_writer(dir_, fds[1]);
    }
    struct Reaper {  // a failed ASSERT must not leave the writer running
      pid_t pid;
      bool reaped = false;
      ~Reaper() {
        if (!reaped && ::kill(pid, SIGKILL) == 0) ::waitpid(pid, nullptr, 0);
      }
    } reaper{pid};
    ::close(fds[1]);
    const int commits = std::uniform_int_distribution<int>(4, 40)(random);
    std::uint64_t acked = 0;
    for (int i = 0; i < commits && read_seq(fds[0], &acked); ++i) {
      if (i == commits / 2) {  // a read-only reader while the writer runs, like `yurthub cache`
        auto reader = must_open(options(/*read_only=*/true));
        ASSERT_NE(reader, nullptr);
        expect_one_whole_generation(*reader, acked);
      }
    }
    ::usleep(std::uniform_int_distribution<unsigned>(0, 20000)(random));
    ::kill(pid, SIGKILL);
    int wstatus = 0;
    ASSERT_EQ(::waitpid(pid, &wstatus, 0), pid);
    reaper.reaped = true;
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "writer exited with " << WEXITSTATUS(wstatus);
    for (std::uint64_t seq = 0; read_seq(fds[0], &seq);) acked = seq;
    ::close(fds[0]);
    auto store = must_open(options());
    ASSERT_NE(store, nullptr);
    expect_one_whole_generation(*store, acked);
    EXPECT_EQ(store->stats().objects, static_cast<std::uint64_t>(kCrashObjects));  // no leaked set
  }
}

}  // namespace
}  // namespace yurthub::cache
