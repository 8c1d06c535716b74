// FilterManager (filters/filter_manager.h) with real informers against a scripted apiserver
// (test/net/scripted_apiserver.h) on the test's io_context: readiness waits for the node, the
// NodePools and the Services; NodePools fall back to v1beta1; nothing is watched when no filter
// is on; chains follow the component, the request and yurt-hub-cfg; a topology change once ready
// calls back, other changes do not.
#include "filters/filter_manager.h"

#include <gtest/gtest.h>

#include "kube/request_info.h"
#include "test/base/poll.h"
#include "test/net/scripted_apiserver.h"

namespace yurthub::filters {
namespace {

using namespace std::chrono_literals;
using net::test_support::http_reply;
using net::test_support::ScriptedApiserver;

const char* kNodes = "/api/v1/nodes";
const char* kPools = "/apis/apps.openyurt.io/v1beta2/nodepools";
const char* kPoolsV1beta1 = "/apis/apps.openyurt.io/v1beta1/nodepools";
const char* kServices = "/api/v1/services";

std::string list(const char* kind, const std::string& items) {
  return std::string(R"({"kind":")") + kind +
         R"(","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[)" + items + "]}";
}
const std::string kNode =
    R"({"metadata":{"name":"edge-1","resourceVersion":"10","labels":{"apps.openyurt.io/nodepool":"pool-a"}}})";
const std::string kPool =
    R"({"metadata":{"name":"pool-a","resourceVersion":"10"},"status":{"nodes":["edge-1","edge-2"]}})";
std::string service(const std::string& rv, const std::string& topology,
                    const std::string& label = "web") {
  return R"({"metadata":{"name":"web","namespace":"default","resourceVersion":")" + rv +
         R"(","labels":{"app":")" + label + R"("},"annotations":{"openyurt.io/topologyKeys":")" +
         topology + R"("}},"spec":{"type":"ClusterIP"}})";
}

kube::RequestInfo request(const std::string& method, const std::string& target,
                          const std::string& component) {
  return kube::classify_request(method, target, component + "/v1.26.0 (linux/amd64)");
}

class FilterManagerTest : public ::testing::Test {
 protected:
  FilterManagerSettings settings(bool enabled = true) {
    FilterManagerSettings s;
    s.flags.enabled = enabled;
    s.node_name = "edge-1";
    s.hub_host = "169.254.2.1";
    return s;
  }
  void start(FilterManager& manager) {
    manager.start(
        [this](net::InformerOptions o, net::Informer::OnChange on_change) {
          o.proxy_port = server_.port();
          o.user_agent = "yurthub/test";
          o.backoff_initial = 20ms;
          o.backoff_max = 80ms;
          o.missing_retry = 80ms;
          made_.push_back(o.path);
          return std::make_unique<net::Informer>(ioc_.get_executor(), std::move(o),
                                                 std::move(on_change));
        },
        [this] { ++topology_changes_; });
  }
  // Runs the io_context until `done()` or 10 s have passed.
  bool wait_until(const std::function<bool()>& done) {
    return ::yurthub::test_support::run_until(ioc_, done);
  }
  // The open watch of `path` (each one hangs until pushed to).
  std::shared_ptr<net::test_support::WatchStream> watch_of(const std::string& path) {
    auto watches = server_.watches();
    for (std::size_t i = 0; i < watches.size() && i < server_.streams.size(); ++i) {
      if (watches[i].path == path) return server_.streams[i];
    }
    return nullptr;
  }

  boost::asio::io_context ioc_;
  ScriptedApiserver server_{ioc_};
  base::MetricsRegistry registry_;
  std::vector<std::string> made_;
  int topology_changes_ = 0;
};

TEST_F(FilterManagerTest, ReadyOnlyOnceTheNodeNodePoolsAndServicesWereListed) {
  FilterManager manager(settings(), registry_);
  server_.on_list(kNodes, http_reply(200, list("NodeList", kNode)));
  server_.on_list(kServices, http_reply(200, list("ServiceList", service("10", "x"))));
  // NodePools: no list scripted yet, so the server answers 503 and the informer retries.
  start(manager);
  ASSERT_TRUE(wait_until([&] {
    auto view = manager.view();
    return view->node_synced && view->services_synced;
  }));
  EXPECT_FALSE(manager.ready());
  EXPECT_EQ(manager.not_ready_reason(), "filters waiting for the first list of: nodepools");

  server_.on_list(kPools, http_reply(200, list("NodePoolList", kPool)));
  ASSERT_TRUE(wait_until([&] { return manager.ready(); }));
  EXPECT_EQ(manager.not_ready_reason(), std::nullopt);
  auto view = manager.view();
  EXPECT_EQ(view->pool_name, "pool-a");
  EXPECT_TRUE(view->pool_known);
  EXPECT_EQ(view->pool_nodes, (std::set<std::string>{"edge-1", "edge-2"}));
  EXPECT_EQ(view->services->size(), 1u);
  // The node informer lists this node only.
  std::size_t node_lists = 0;
  for (const auto& r : server_.lists()) {
    if (r.path != kNodes) continue;
    ++node_lists;
    EXPECT_EQ(r.query.at("fieldSelector"), "metadata.name=edge-1");
  }
  EXPECT_GE(node_lists, 1u);  // the check above ran
  manager.stop();
}

TEST_F(FilterManagerTest, NodePoolsAreReadFromV1beta1WhenV1beta2IsNotServed) {
  FilterManager manager(settings(), registry_);
  server_.on_list(kNodes, http_reply(200, list("NodeList", kNode)));
  server_.on_list(kServices, http_reply(200, list("ServiceList", "")));
  server_.on_list(kPools, http_reply(404, R"({"kind":"Status","code":404})"));
  server_.on_list(kPoolsV1beta1, http_reply(200, list("NodePoolList", kPool)));
  start(manager);
  ASSERT_TRUE(wait_until([&] { return manager.ready(); }));
  EXPECT_NE(std::find(made_.begin(), made_.end(), kPoolsV1beta1), made_.end());
  EXPECT_EQ(manager.view()->pool_nodes, (std::set<std::string>{"edge-1", "edge-2"}));
  manager.stop();
}

TEST_F(FilterManagerTest, WithEveryFilterOffNothingIsWatchedAndItIsReadyAtOnce) {
  FilterManager manager(settings(false), registry_);
  start(manager);
  EXPECT_TRUE(manager.ready());
  EXPECT_TRUE(made_.empty());
  EXPECT_EQ(manager.filter(request("GET", "/api/v1/services", "kube-proxy")), nullptr);
}

TEST_F(FilterManagerTest, ChainsFollowTheComponentTheRequestAndTheConfigMap) {
  FilterManager manager(settings(), registry_);
  const std::string slices = "/apis/discovery.k8s.io/v1/endpointslices?limit=500";
  EXPECT_NE(manager.filter(request("GET", slices, "kube-proxy")), nullptr);
  EXPECT_NE(manager.filter(request("GET", slices + "&watch=true", "coredns")), nullptr);
  EXPECT_NE(manager.filter(request("GET", "/api/v1/services", "kubelet")), nullptr);
  EXPECT_NE(manager.filter(
                request("GET", "/api/v1/namespaces/kube-system/configmaps/kube-proxy", "kubelet")),
            nullptr);  // inclusterconfig on a get
  EXPECT_EQ(manager.filter(request("GET", slices, "kubelet")), nullptr);
  EXPECT_EQ(manager.filter(request("GET", slices, "yurthub")), nullptr);
  // A table or metadata-only answer is not what filters read; nor is a write or a subresource.
  auto table = request("GET", slices, "kube-proxy");
  table.accept = "application/json;as=Table;v=v1;g=meta.k8s.io";
  EXPECT_EQ(manager.filter(table), nullptr);
  EXPECT_EQ(
      manager.filter(request("DELETE", "/api/v1/namespaces/default/services/web", "kube-proxy")),
      nullptr);
  EXPECT_EQ(manager.filter(
                request("GET", "/api/v1/namespaces/default/services/web/status", "kube-proxy")),
            nullptr);

  // yurt-hub-cfg gives servicetopology to another component, live.
  EXPECT_EQ(manager.filter(request("GET", slices, "my-proxy")), nullptr);
  manager.set_config({{"servicetopology", "my-proxy, other/v2"}});
  EXPECT_NE(manager.filter(request("GET", slices, "my-proxy")), nullptr);
}

TEST_F(FilterManagerTest, OnlyATopologyChangeOnceReadyCallsBack) {
  FilterManager manager(settings(), registry_);
  server_.on_list(kNodes, http_reply(200, list("NodeList", kNode)));
  server_.on_list(kPools, http_reply(200, list("NodePoolList", kPool)));
  server_.on_list(kServices,
                  http_reply(200, list("ServiceList", service("10", "kubernetes.io/hostname"))));
  start(manager);
  ASSERT_TRUE(wait_until([&] { return manager.ready() && watch_of(kServices) != nullptr; }));
  EXPECT_EQ(topology_changes_, 0);  // becoming ready is not a change open watches must see

  auto label_only =
      R"({"type":"MODIFIED","object":)" + service("11", "kubernetes.io/hostname", "web-2") + "}";
  watch_of(kServices)->push(label_only);
  ASSERT_TRUE(wait_until([&] {
    auto services = manager.view()->services;
    auto web = services->find("default/web");
    return web != services->end() &&
           std::string((*web->second)["metadata"]["resourceVersion"].GetString()) == "11";
  }));
  EXPECT_EQ(topology_changes_, 0);

  auto to_pool = R"({"type":"MODIFIED","object":)" + service("12", "openyurt.io/nodepool") + "}";
  watch_of(kServices)->push(to_pool);
  ASSERT_TRUE(wait_until([&] { return topology_changes_ == 1; }));
  manager.stop();
}

}  // namespace
}  // namespace yurthub::filters
