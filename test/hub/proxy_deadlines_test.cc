// The request path's deadlines, on a held clock (base::TestClock): the hub's Worker runs for
// real against the scripted apiserver of proxy_fixture.h, and the test moves time past each
// deadline instead of waiting for it, which no test could do while the deadlines were Beast's
// steady_clock timers. Each case checks that nothing ends a second early, then what the client
// gets once the deadline passes.
#include "base/clock.h"
#include "test/hub/proxy_fixture.h"

namespace yurthub::hub {
namespace {

using namespace proxy_fixture;
using namespace std::chrono_literals;

constexpr auto kQuiet = 50ms;  // how long "nothing happened" is watched for

TEST_F(ProxyTest, AnApiserverThatNeverAnswersGetsA504AtTheResponseDeadline) {
  base::TestClock clock;
  start([](const Received&) { return std::vector<Step>{pause()}; });
  Client c = client();
  c.get("/api/v1/pods");
  ASSERT_TRUE(eventually([&] { return upstream_->received().size() == 1; }));
  clock.advance(kUpstreamResponseTimeout - 1s);
  EXPECT_TRUE(c.quiet_for(kQuiet)) << c.received();

  clock.advance(2s);
  auto response = c.response();
  EXPECT_EQ(response.result_int(), 504u) << response;
  EXPECT_NE(response.body().find(R"("reason":"Timeout")"), std::string::npos) << response.body();
  EXPECT_TRUE(counted(R"(kind="timeout"} 1)")) << metrics();
}

TEST_F(ProxyTest, AWatchNobodyEndsEndsCleanlyAMinutePastItsTimeout) {
  base::TestClock clock;
  start([](const Received&) {
    return std::vector<Step>{write(kWatchHeader + chunk(event("a"))), pause()};
  });
  Client c = client();
  c.get("/api/v1/pods?watch=true&timeoutSeconds=300");
  ASSERT_TRUE(c.read_until(R"("name":"a")"));
  // The apiserver should have ended it at 300 s; the hub waits a minute more for that.
  clock.advance(300s + 60s - 1s);
  EXPECT_TRUE(c.quiet_for(kQuiet));

  clock.advance(2s);
  ASSERT_TRUE(c.read_to_end());
  EXPECT_TRUE(c.received().ends_with("0\r\n\r\n")) << c.received();  // it can be resumed
  EXPECT_TRUE(counted(R"(node_yurthub_streams_ended_total{reason="upstream_timeout"} 1)"))
      << metrics();
  EXPECT_TRUE(counted(R"(kind="stream_broken"} 1)")) << metrics();
}

TEST_F(ProxyTest, AnIdleKeepAliveConnectionIsClosedAfterItsIdleTimeout) {
  base::TestClock clock;
  start([](const Received&) { return std::vector<Step>{write(json_response("{}"))}; });
  Client c = client();
  c.get("/api/v1/pods");
  EXPECT_EQ(c.response().result_int(), 200u);
  clock.advance(kClientIdleTimeout - 1s);
  EXPECT_TRUE(c.quiet_for(kQuiet));

  clock.advance(2s);
  EXPECT_TRUE(c.read_to_end());
  EXPECT_TRUE(c.received().empty()) << c.received();
}

TEST_F(ProxyTest, ARequestBodyHasADeadlineWhateverItsPace) {
  base::TestClock clock;
  options_.request_body_timeout = 60s;
  start([](const Received&) { return std::vector<Step>{write(json_response("{}"))}; });
  Client c = client();
  c.send(
      "PUT /api/v1/namespaces/default/configmaps/x HTTP/1.1\r\nHost: hub\r\n"
      "User-Agent: slowloris/1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{");
  // A byte every 20 s is well within the 30 s a single read may take, but not the body's 60 s.
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(c.quiet_for(kQuiet));
    clock.advance(20s);
    c.send(" ");
  }
  ASSERT_TRUE(c.quiet_for(kQuiet));
  clock.advance(21s);
  EXPECT_TRUE(c.read_to_end());
  EXPECT_TRUE(upstream_->received().empty());  // the apiserver never got a whole request
}

}  // namespace
}  // namespace yurthub::hub
