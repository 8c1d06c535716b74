// HealthChecker (hub/health_checker.h) probing an in-process TLS apiserver's /readyz on
// 127.0.0.1:0, with the hub's clock held (base::TestClock): the probe interval and timeouts pass
// when the test moves time, so the state machine's timing is checked without waiting 10 s per
// probe. One thread: the checker and the server share the test's io_context.
#include <memory>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "base/clock.h"
#include "base/metrics.h"
#include "hub/health_checker.h"
#include "hub/hub_metrics.h"
#include "net/http_io.h"
#include "net/streams.h"
#include "test/hub/loopback_pki.h"

namespace yurthub::hub {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;
using std::chrono::seconds;

// Answers every GET /readyz with `code`, or, while `answering` is false, reads the probe and
// never answers. With `keep_alive`, a connection carries one probe after another; with
// `one_answer_per_connection` too, the second probe on a connection is read and the connection
// closed unanswered (an apiserver closing an idle connection as the probe arrives).
class ReadyzServer {
 public:
  ReadyzServer(asio::io_context& io, std::shared_ptr<asio::ssl::context> tls)
      : acceptor_(io, {asio::ip::make_address("127.0.0.1"), 0}) {
    asio::co_spawn(io,
                   test_support::accept_tls(acceptor_, std::move(tls),
                                            [this](auto stream) { return serve(stream); }),
                   asio::detached);
  }
  std::string port() const { return std::to_string(acceptor_.local_endpoint().port()); }

  unsigned code = 200;
  bool answering = true;
  bool keep_alive = false;
  bool one_answer_per_connection = false;
  int probes = 0;
  int connections = 0;

 private:
  asio::awaitable<void> serve(std::shared_ptr<net::TlsStream> stream) {
    auto [hec] = co_await stream->async_handshake(asio::ssl::stream_base::server, net::kNoThrow);
    if (hec) co_return;
    ++connections;
    boost::beast::flat_buffer buffer;
    for (int answered = 0;; ++answered) {
      http::request<http::empty_body> request;
      auto [rec, rn] = co_await http::async_read(*stream, buffer, request, net::kNoThrow);
      if (rec) co_return;
      ++probes;
      if (!answering) {
        held_.push_back(stream);  // open, silent
        co_return;
      }
      if (answered == 1 && one_answer_per_connection) break;
      http::response<http::string_body> response{static_cast<http::status>(code), 11};
      response.body() = code == 200 ? "ok" : "not ready";
      response.keep_alive(keep_alive);
      response.prepare_payload();
      auto [wec, wn] = co_await http::async_write(*stream, response, net::kNoThrow);
      if (wec || !keep_alive) break;
    }
    net::close_socket(*stream);
  }

  tcp::acceptor acceptor_;
  std::vector<std::shared_ptr<net::TlsStream>> held_;
};

class HealthCheckerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pki_ = std::make_unique<test_support::LoopbackPki>(); }
  static void TearDownTestSuite() { pki_.reset(); }

  void SetUp() override {
    auto server_tls = pki_->server();
    ASSERT_TRUE(server_tls);
    server_ = std::make_unique<ReadyzServer>(io_, server_tls);
    servers_ = std::make_unique<ServerSet>(
        std::vector<ServerAddress>{test_support::loopback_server(server_->port())},
        LbMode::RoundRobin);
    tls_ = pki_->upstream_tls();
    checker_ = std::make_unique<HealthChecker>(
        io_.get_executor(), *servers_, tls_, settings_, metrics_,
        [this](std::size_t, bool healthy) { changes_.push_back(healthy); });
    checker_->start();
  }
  void TearDown() override {
    checker_->stop();
    io_.run_for(std::chrono::milliseconds(20));
  }

  // Runs the loop until `done` holds (true), or for at most 5 s of real time (false).
  template <class Done>
  bool run_until(Done done) {
    for (int i = 0; i < 5000 && !done(); ++i) io_.run_for(std::chrono::milliseconds(1));
    io_.restart();
    return done();
  }
  // Moves the clock on, then gives the loop a few polls to act on it.
  void advance(base::Clock::duration by) {
    clock_.advance(by);
    io_.run_for(std::chrono::milliseconds(20));
    io_.restart();
  }
  bool healthy() const { return servers_->healthy(0); }
  // Probes the checker has finished with `result`; it sets its next wait in the same step, so
  // once this counts a probe, moving the clock moves it past that wait's start.
  int finished(const std::string& result) const {
    const std::string text = registry_.render();
    const std::string key = "result=\"" + result + "\"} ";
    const auto at = text.find(key);
    return at == std::string::npos ? 0 : std::stoi(text.substr(at + key.size()));
  }

  static inline std::unique_ptr<test_support::LoopbackPki> pki_;
  base::TestClock clock_;
  asio::io_context io_;
  HealthChecker::Settings settings_{std::chrono::seconds(10), std::chrono::seconds(2), 3, 2};
  base::MetricsRegistry registry_;
  HubMetrics metrics_{registry_};
  net::UpstreamTls tls_;
  std::unique_ptr<ReadyzServer> server_;
  std::unique_ptr<ServerSet> servers_;
  std::unique_ptr<HealthChecker> checker_;
  std::vector<bool> changes_;
};

TEST_F(HealthCheckerTest, TheFirstProbeDecidesAtOnce) {
  ASSERT_TRUE(run_until([&] { return checker_->initial_probes_done(); }));
  EXPECT_TRUE(healthy());
  EXPECT_EQ(changes_, std::vector<bool>{true});
  EXPECT_EQ(server_->probes, 1);
}

TEST_F(HealthCheckerTest, ProbesEveryIntervalAndNotBefore) {
  ASSERT_TRUE(run_until([&] { return finished("success") == 1; }));
  advance(seconds(9));
  EXPECT_EQ(server_->probes, 1);
  advance(seconds(1));
  EXPECT_TRUE(run_until([&] { return server_->probes == 2; }));
}

TEST_F(HealthCheckerTest, OneFailedProbeMarksUnhealthyAndTwoSuccessesBringItBack) {
  ASSERT_TRUE(run_until([&] { return healthy(); }));
  server_->code = 500;
  advance(seconds(10));
  ASSERT_TRUE(run_until([&] { return !healthy(); }));
  EXPECT_EQ(server_->probes, 1 + 3);  // the failed probe's three attempts

  server_->code = 200;
  advance(seconds(10));
  ASSERT_TRUE(run_until([&] { return finished("success") == 2; }));  // the first, and this one
  EXPECT_FALSE(healthy()) << "one success is below --heartbeat-healthy-threshold=2";
  advance(seconds(10));
  EXPECT_TRUE(run_until([&] { return healthy(); }));
  EXPECT_EQ(changes_, (std::vector<bool>{true, false, true}));
}

TEST_F(HealthCheckerTest, AnApiserverThatNeverAnswersFailsEachAttemptAtItsTimeout) {
  ASSERT_TRUE(run_until([&] { return healthy(); }));
  server_->answering = false;
  advance(seconds(10));
  for (int attempt = 1; attempt <= 3; ++attempt) {
    ASSERT_TRUE(run_until([&] { return server_->probes == 1 + attempt; }));
    EXPECT_TRUE(healthy()) << "attempt " << attempt << " failed before its timeout";
    advance(seconds(2));
  }
  EXPECT_TRUE(run_until([&] { return !healthy(); }));
}

// The link is cut, then returns: while the server cannot be reached it is probed every second,
// and two successes a second apart bring it back, not two 10 s intervals.
TEST_F(HealthCheckerTest, AnUnreachableServerIsProbedEverySecondAndBackWithinTwo) {
  ASSERT_TRUE(run_until([&] { return healthy(); }));
  server_->answering = false;
  advance(seconds(10));
  for (int attempt = 1; attempt <= 3; ++attempt) {
    ASSERT_TRUE(run_until([&] { return server_->probes == 1 + attempt; }));
    advance(seconds(2));
  }
  ASSERT_TRUE(run_until([&] { return !healthy(); }));
  advance(seconds(1));  // still cut: one more probe, a second later
  ASSERT_TRUE(run_until([&] { return server_->probes == 5; }));
  advance(seconds(2));  // its first attempt timed out; the second is held unanswered too
  ASSERT_TRUE(run_until([&] { return server_->probes == 6; }));

  server_->answering = true;
  const int before = finished("success");
  for (int second = 0; second < 6 && !healthy(); ++second) advance(seconds(1));
  EXPECT_TRUE(run_until([&] { return healthy(); }));
  EXPECT_EQ(finished("success"), before + 2);
  EXPECT_EQ(changes_, (std::vector<bool>{true, false, true}));
}

// An apiserver that answers, but not ready (starting, overloaded), is left alone for the
// interval: a fleet of hubs probing it every second would only slow its start.
TEST_F(HealthCheckerTest, AServerThatAnswersNotReadyIsProbedOnlyEveryInterval) {
  ASSERT_TRUE(run_until([&] { return healthy(); }));
  server_->code = 503;
  advance(seconds(10));
  ASSERT_TRUE(run_until([&] { return !healthy(); }));
  const int probes = server_->probes;
  advance(seconds(9));
  EXPECT_EQ(server_->probes, probes);
  advance(seconds(1));
  EXPECT_TRUE(run_until([&] { return server_->probes > probes; }));
}

TEST_F(HealthCheckerTest, ProbesReuseTheConnectionTheApiserverKeepsOpen) {
  server_->keep_alive = true;
  ASSERT_TRUE(run_until([&] { return finished("success") == 1; }));
  for (int probe = 2; probe <= 3; ++probe) {
    advance(seconds(10));
    ASSERT_TRUE(run_until([&] { return finished("success") == probe; }));
  }
  EXPECT_EQ(server_->probes, 3);
  EXPECT_EQ(server_->connections, 1) << "a TLS handshake per probe";
}

// --heartbeat-failed-retry=1: a probe has one attempt, so one lost to a closed connection would
// mark the server unhealthy.
class HealthCheckerOneAttemptTest : public HealthCheckerTest {
 protected:
  HealthCheckerOneAttemptTest() { settings_.attempts = 1; }
};

TEST_F(HealthCheckerOneAttemptTest, AProbeOnAConnectionClosedUnderItIsSentOnAFreshOne) {
  server_->keep_alive = true;
  server_->one_answer_per_connection = true;
  ASSERT_TRUE(run_until([&] { return finished("success") == 1; }));
  for (int probe = 2; probe <= 3; ++probe) {
    advance(seconds(10));
    ASSERT_TRUE(run_until([&] { return finished("success") == probe; }));
  }
  EXPECT_EQ(finished("failure"), 0);
  EXPECT_EQ(server_->connections, 3);
  EXPECT_EQ(changes_, std::vector<bool>{true});
}

TEST_F(HealthCheckerTest, ProbeSoonDoesNotWaitForTheInterval) {
  ASSERT_TRUE(run_until([&] { return healthy(); }));
  server_->code = 500;
  checker_->probe_soon(0);
  EXPECT_TRUE(run_until([&] { return !healthy(); }));
}

}  // namespace
}  // namespace yurthub::hub
