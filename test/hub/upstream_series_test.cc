// YurtHub's series about requests and apiserver connections, read from the rendered /metrics
// text as Prometheus scrapes it: node_yurthub_in_flight_requests_collector goes up while a watch
// is served and back down when it ends, node_yurthub_closable_conns_collector counts the hub's
// open connections to the apiserver, and openyurt_version_info says what was built. The fixture
// is test/hub/proxy_fixture.h.
#include "hub/version.h"
#include "test/hub/proxy_fixture.h"

namespace yurthub::hub {
namespace {

using namespace proxy_fixture;

const std::string kWatchInFlight =
    R"(node_yurthub_in_flight_requests_collector{verb="watch",resource="pods",subresources="",)"
    R"(client="kubelet/v1.26.0"} )";

std::string closable_conns(const std::string& port) {
  return R"(node_yurthub_closable_conns_collector{server="127.0.0.1:)" + port + R"("} )";
}

TEST_F(ProxyTest, InFlightRequestsCollectorCountsAWatchWhileItIsServed) {
  start([](const Received&) {
    return std::vector<Step>{write(kWatchHeader + chunk(event("a"))), pause(),
                             write(chunk(event("b")) + "0\r\n\r\n")};
  });
  Client c = client();
  c.get("/api/v1/pods?watch=true");
  ASSERT_TRUE(c.read_until(R"("name":"a")"));
  EXPECT_NE(metrics().find(kWatchInFlight + "1\n"), std::string::npos) << metrics();
  EXPECT_NE(metrics().find("node_yurthub_in_flight_requests_total 1\n"), std::string::npos);
  upstream_->release();
  ASSERT_TRUE(c.read_until("0\r\n\r\n"));
  EXPECT_TRUE(counted(kWatchInFlight + "0\n")) << metrics();
}

TEST_F(ProxyTest, InFlightRequestsCollectorLeavesOutNonResourceRequests) {
  start([](const Received&) { return std::vector<Step>{write(json_response("{}"))}; });
  Client c = client();
  c.get("/version");
  EXPECT_EQ(c.response().result_int(), 200u);
  c.get("/api/v1/nodes/n1");
  EXPECT_EQ(c.response().result_int(), 200u);
  EXPECT_TRUE(counted(R"(verb="get",resource="nodes",subresources="",client="kubelet/v1.26.0"} 0)"))
      << metrics();
  EXPECT_EQ(metrics().find(R"(node_yurthub_in_flight_requests_collector{verb="get",resource="")"),
            std::string::npos)
      << metrics();
}

TEST_F(ProxyTest, ClosableConnsCollectorCountsOpenConnectionsToTheApiserver) {
  start([](const Received&) {
    return std::vector<Step>{write(kWatchHeader + chunk(event("a"))), pause()};
  });
  const std::string series = closable_conns(upstream_->port());
  {
    Client first = client();
    first.get("/api/v1/pods?watch=true");
    ASSERT_TRUE(first.read_until(R"("name":"a")"));
    Client second = client();
    second.get("/api/v1/pods?watch=true");
    ASSERT_TRUE(second.read_until(R"("name":"a")"));
    EXPECT_NE(metrics().find(series + "2\n"), std::string::npos) << metrics();
  }
  // Both clients left: their watches' connections to the apiserver are closed.
  EXPECT_TRUE(counted(series + "0\n")) << metrics();
}

TEST_F(ProxyTest, VersionInfoNamesTheBuild) {
  start([](const Received&) { return std::vector<Step>{write(json_response("{}"))}; });
  const std::string text = metrics();
  const auto at = text.find("\nopenyurt_version_info{component_name=\"yurthub\",git_version=\"" +
                            std::string(kVersion) + "\",");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
  EXPECT_NE(line.find(R"(platform="linux/)"), std::string::npos) << line;
  EXPECT_NE(line.find(R"(nodepoollabelkey="apps.openyurt.io/nodepool")"), std::string::npos);
  EXPECT_TRUE(line.ends_with("} 1")) << line;
}

}  // namespace
}  // namespace yurthub::hub
