// Tests for cache/inspect.cc (`yurthub cache ls|get|stats`): a store populated through the Store
// API in a temp directory, then each command's output lines and exit status as an operator sees
// them, including bad usage (2) and a missing cache (1).
#include "cache/inspect.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cache/list_identity.h"
#include "cache/store.h"

namespace yurthub::cache {
namespace {

namespace fs = std::filesystem;

struct Output {
  int code = -1;
  std::vector<std::string> out;
  std::string err;
};

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

const std::string kWeb1 = R"({"kind":"Pod","metadata":{"name":"web-1","namespace":"default"}})";
const std::string kWeb1FromGet =
    R"({"kind":"Pod","metadata":{"name":"web-1","resourceVersion":"102"}})";
const std::string kWeb2 = R"({"kind":"Pod","metadata":{"name":"web-2"}})";
const std::string kDns = R"({"kind":"Pod","metadata":{"name":"dns"}})";
const std::string kNode = R"({"kind":"Node","metadata":{"name":"node-1"}})";
const std::string kLease = R"({"kind":"Lease"})";
const std::string kService = R"({"kind":"Service"})";
const std::string kStaged = R"({"kind":"Service","staged":true})";

const ListIdentity kPods{"kubelet", "", "v1", "pods", "", "", "spec.nodeName=node-1"};
const ListIdentity kLeases{"kubelet", "coordination.k8s.io", "v1", "leases", "kube-node-lease", "",
                           ""};
const ListIdentity kServices{
    "kube-proxy", "", "v1", "services", "", "!service.kubernetes.io/headless", ""};
const ListIdentity kNodesGets = ListIdentity{"kubelet", "", "v1", "nodes", "", "", ""}.get_set();

class InspectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "inspect_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/cache";
    populate();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  void populate() {
    StoreOptions options;
    options.directory = dir_;
    options.map_size = 64ull << 20;
    auto store = open_lmdb_store(options);
    ASSERT_TRUE(store.ok()) << store.error().message;
    Status status = (*store)->write([](WriteTxn& txn) -> Status {
      auto record = [](std::uint32_t set, std::uint64_t rv, bool complete, bool stale,
                       std::int64_t synced) {
        ListRecord r;
        r.set_id = set;
        r.resource_version = rv;
        r.complete = complete;
        r.stale = stale;
        r.synced_unix = synced;
        return r;
      };
      ListRecord services = record(5, 300, true, false, 1700000200);
      services.staging_id = 6;
      const std::vector<std::pair<std::string, ListRecord>> lists = {
          {kPods.key(), record(1, 105, true, false, 1700000000)},
          {kPods.get_set().key(), record(2, 102, false, false, 0)},
          {kNodesGets.key(), record(3, 50, false, false, 0)},
          {kLeases.key(), record(4, 77, true, true, 1700000100)},
          {kServices.key(), services}};
      for (const auto& [key, list] : lists) {
        if (Status s = txn.put_list(key, list); !s) return s;
      }
      struct Put {
        std::uint32_t set;
        const char* ns;
        const char* name;
        std::uint64_t rv;
        const std::string& json;
      };
      const Put puts[] = {{1, "default", "web-1", 100, kWeb1},
                          {1, "default", "web-2", 101, kWeb2},
                          {1, "kube-system", "dns", 90, kDns},
                          {2, "default", "web-1", 102, kWeb1FromGet},
                          {3, "", "node-1", 50, kNode},
                          {4, "kube-node-lease", "node-1", 77, kLease},
                          {5, "default", "kubernetes", 300, kService},
                          {6, "default", "kubernetes", 301, kStaged},
                          {99, "lost", "orphan", 1, kLease}};
      for (const Put& put : puts) {
        if (Status s = txn.put_object(put.set, put.ns, put.name, put.rv, put.json); !s) return s;
      }
      return {};
    });
    ASSERT_TRUE(status.ok()) << status.error().message;
  }  // the writer closes before the commands open the cache read-only

  Output run(const std::vector<std::string>& args, const std::string& dir = "") {
    std::ostringstream out, err;
    Output result;
    result.code = run_cache_command(args, dir.empty() ? dir_ : dir, out, err);
    result.out = lines(out.str());
    result.err = err.str();
    return result;
  }

  std::string root_;
  std::string dir_;
};

const std::string kServicesLine =
    "kube-proxy services.v1.core label=!service.kubernetes.io/headless  objects=1  rv=300  "
    "state=complete  synced=2023-11-14T22:16:40Z  staging=1";
const std::string kNodesLine =
    "kubelet nodes.v1.core (gets)  objects=1  rv=50  state=partial  synced=never";
const std::string kPodGetsLine =
    "kubelet pods.v1.core (gets)  objects=1  rv=102  state=partial  synced=never";
const std::string kPodsLine =
    "kubelet pods.v1.core field=spec.nodeName=node-1  objects=3  rv=105  state=complete  "
    "synced=2023-11-14T22:13:20Z";
const std::string kLeasesLine =
    "kubelet leases.v1.coordination.k8s.io ns=kube-node-lease  objects=1  rv=77  "
    "state=complete,stale  synced=2023-11-14T22:15:00Z";

using Lines = std::vector<std::string>;

TEST_F(InspectTest, LsListsEveryIdentityInKeyOrder) {
  Output result = run({"ls"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, (Lines{kServicesLine, kNodesLine, kPodGetsLine, kPodsLine, kLeasesLine}));
  EXPECT_EQ(result.err, "");
}

TEST_F(InspectTest, LsFiltersByComponentAndResource) {
  EXPECT_EQ(run({"ls", "kubelet"}).out, (Lines{kNodesLine, kPodGetsLine, kPodsLine, kLeasesLine}));
  EXPECT_EQ(run({"ls", "kube-proxy"}).out, (Lines{kServicesLine}));
  EXPECT_EQ(run({"ls", "kube"}).out, Lines{});  // a component, not a name prefix
  EXPECT_EQ(run({"ls", "kubelet/pods"}).out, (Lines{kPodGetsLine, kPodsLine}));
  EXPECT_EQ(run({"ls", "kubelet/pods.v1"}).out, (Lines{kPodGetsLine, kPodsLine}));
  EXPECT_EQ(run({"ls", "kubelet/pods.v1.core"}).out, (Lines{kPodGetsLine, kPodsLine}));
  EXPECT_EQ(run({"ls", "kubelet/pods.v2"}).out, Lines{});
  EXPECT_EQ(run({"ls", "kubelet/leases.v1.coordination.k8s.io"}).out, (Lines{kLeasesLine}));
  EXPECT_EQ(run({"ls", "kubelet/leases.v1.core"}).out, Lines{});
  Output none = run({"ls", "flanneld"});
  EXPECT_EQ(none.code, 0);
  EXPECT_EQ(none.out, Lines{});
}

TEST_F(InspectTest, GetPrintsTheObjectOfEveryIdentityHoldingIt) {
  Output result = run({"get", "kubelet/pods/default/web-1"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(
      result.out,
      (Lines{"# kubelet pods.v1.core (gets)  resourceVersion=102", kWeb1FromGet,
             "# kubelet pods.v1.core field=spec.nodeName=node-1  resourceVersion=100", kWeb1}));
  EXPECT_EQ(run({"get", "kubelet/pods.v1.core/kube-system/dns"}).out,
            (Lines{"# kubelet pods.v1.core field=spec.nodeName=node-1  resourceVersion=90", kDns}));
}

TEST_F(InspectTest, GetClusterScopedObject) {
  Output result = run({"get", "kubelet/nodes/node-1"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, (Lines{"# kubelet nodes.v1.core (gets)  resourceVersion=50", kNode}));
}

TEST_F(InspectTest, GetOfAnUncachedObjectFails) {
  for (const std::string target :
       {"kubelet/pods/default/missing", "kubelet/pods/web-1", "kube-proxy/pods/default/web-1",
        "kubelet/services/default/kubernetes"}) {
    Output result = run({"get", target});
    EXPECT_EQ(result.code, 1) << target;
    EXPECT_EQ(result.out, Lines{});
    EXPECT_EQ(result.err, "yurthub cache: " + target + " is not in the cache\n");
  }
}

TEST_F(InspectTest, StatsCountsObjectsBytesAndListsPerComponent) {
  Output result = run({"stats"});
  ASSERT_EQ(result.code, 0) << result.err;
  ASSERT_EQ(result.out.size(), 8u);
  const std::size_t kubelet_bytes = kWeb1.size() + kWeb2.size() + kDns.size() +
                                    kWeb1FromGet.size() + kNode.size() + kLease.size();
  const std::size_t proxy_bytes = kService.size() + kStaged.size();
  EXPECT_EQ(result.out[0], "objects: 9");
  EXPECT_EQ(result.out[1], "json_bytes: " + std::to_string(kubelet_bytes + proxy_bytes));
  EXPECT_EQ(result.out[2], "lists: 5");
  EXPECT_EQ(result.out[3], "map_size: " + std::to_string(64ull << 20));
  EXPECT_TRUE(result.out[4].starts_with("used_bytes: ")) << result.out[4];
  EXPECT_NE(result.out[4], "used_bytes: 0 (0.0% of the map)");
  EXPECT_TRUE(result.out[4].ends_with("% of the map)")) << result.out[4];
  EXPECT_EQ(result.out[5], "unreferenced_objects: 1");
  EXPECT_EQ(result.out[6], "component kube-proxy: lists=1 objects=2 json_bytes=" +
                               std::to_string(proxy_bytes) + " last_sync=2023-11-14T22:16:40Z");
  EXPECT_EQ(result.out[7], "component kubelet: lists=4 objects=6 json_bytes=" +
                               std::to_string(kubelet_bytes) + " last_sync=2023-11-14T22:15:00Z");
}

TEST_F(InspectTest, BadUsageExits2WithUsageOnStderr) {
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"frobnicate"},
      {"ls", "a/b/c"},
      {"ls", "kubelet", "extra"},
      {"ls", "/pods"},
      {"ls", "kubelet/pods..core"},
      {"get"},
      {"get", "kubelet/pods"},
      {"get", "kubelet/pods/default/web-1/extra"},
      {"get", "kubelet//default/web-1"},
      {"stats", "extra"},
  };
  for (const auto& args : bad) {
    Output result = run(args);
    EXPECT_EQ(result.code, 2) << ::testing::PrintToString(args);
    EXPECT_EQ(result.out, Lines{});
    EXPECT_NE(result.err.find("usage: yurthub cache"), std::string::npos);
  }
  Output help = run({"help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_FALSE(help.out.empty());
}

TEST_F(InspectTest, MissingCacheDirectoryIsAOneLineError) {
  const std::string missing = root_ + "/nowhere";
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"ls"}, {"stats"}, {"get", "kubelet/nodes/node-1"}}) {
    Output result = run(args, missing);
    EXPECT_EQ(result.code, 1);
    EXPECT_EQ(result.err, "yurthub cache: cache directory " + missing + " does not exist\n");
  }
  EXPECT_FALSE(fs::exists(missing));
  ASSERT_TRUE(fs::create_directory(missing));  // exists but the hub never wrote to it
  Output empty = run({"ls"}, missing);
  EXPECT_EQ(empty.code, 1);
  EXPECT_EQ(lines(empty.err).size(), 1u);
  EXPECT_TRUE(fs::is_empty(missing));
}

}  // namespace
}  // namespace yurthub::cache
