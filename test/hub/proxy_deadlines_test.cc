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

// Moves the held clock a second at a time until the client has something to read or the hub
// closed the connection, and returns how far the clock moved. The hub gets 2 ms after each step
// before `deadline` and 50 ms after each step from then on (a loaded or sanitized build reacts
// slowly). Nothing can happen before the deadline, so the result is never below it; it may be a
// few steps above when the hub set the deadline while the clock was already moving. Stops at
// `deadline + slack`.
std::chrono::seconds seconds_until_answered(base::TestClock& clock, Client& c,
                                            std::chrono::seconds deadline,
                                            std::chrono::seconds slack) {
  std::chrono::seconds moved{0};
  while (moved < deadline + slack) {
    if (!c.quiet_for(moved < deadline ? 2ms : 50ms)) break;
    clock.advance(1s);
    moved += 1s;
  }
  return moved;
}

TEST_F(ProxyTest, AnApiserverThatNeverAnswersGetsA504AtTheResponseDeadline) {
  base::TestClock clock;
  start([](const Received&) { return std::vector<Step>{pause()}; });
  Client c = client();
  c.get("/api/v1/pods");
  ASSERT_TRUE(eventually([&] { return upstream_->received().size() == 1; }));
  const auto moved = seconds_until_answered(clock, c, kUpstreamResponseTimeout, 10s);
  EXPECT_GE(moved, kUpstreamResponseTimeout);
  EXPECT_LT(moved, kUpstreamResponseTimeout + 10s);

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
  ASSERT_TRUE(c.read_until(R"("name":"a")"));  // the deadline was set before this event went out
  // The apiserver should have ended it at 300 s; the hub waits a minute more for that.
  const auto moved = seconds_until_answered(clock, c, 360s, 10s);
  EXPECT_GE(moved, 360s);
  EXPECT_LT(moved, 370s);

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
  const auto moved = seconds_until_answered(clock, c, kClientIdleTimeout, 10s);
  EXPECT_GE(moved, kClientIdleTimeout);
  EXPECT_LT(moved, kClientIdleTimeout + 10s);

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
  // The hub has read the header (and set the body's deadline right after) before time moves.
  ASSERT_TRUE(counted("node_yurthub_in_flight_requests_total 1")) << metrics();
  // A byte every 20 s is well within the 30 s a single read may take, but not the body's 60 s.
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(c.quiet_for(kQuiet));
    clock.advance(20s);
    c.send(" ");
  }
  // 40 s have gone: the body's deadline is 20 s away, the read's own 30 s.
  const auto moved = seconds_until_answered(clock, c, 20s, 5s);
  EXPECT_GE(moved, 20s);
  EXPECT_LT(moved, 25s);
  EXPECT_TRUE(c.read_to_end());
  EXPECT_TRUE(upstream_->received().empty());  // the apiserver never got a whole request
}

}  // namespace
}  // namespace yurthub::hub
