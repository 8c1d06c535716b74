// UpstreamPool (hub/upstream_pool.h) against an in-process TLS server on 127.0.0.1:0, with a
// base::TestClock for the idle timeout: which idle connections are reused and which are dialled
// afresh (timed out, closed by the server, made with a replaced certificate, another identity,
// an unhealthy server), the per-key bound, and reap(). One thread; no sleeps.
#include <future>

#include <openssl/ssl.h>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_future.hpp>

#include "base/clock.h"
#include "hub/upstream_pool.h"
#include "net/http_io.h"
#include "net/streams.h"
#include "test/hub/loopback_pki.h"
#include "test/net/without_waiting.h"

namespace yurthub::hub {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using asio::ip::tcp;

// Accepts TLS connections and keeps them open until close_all().
class TlsServer {
 public:
  TlsServer(asio::io_context& io, std::shared_ptr<ssl::context> tls)
      : acceptor_(io, {asio::ip::make_address("127.0.0.1"), 0}) {
    asio::co_spawn(io,
                   test_support::accept_tls(acceptor_, std::move(tls),
                                            [this](auto stream) { return handshake(stream); }),
                   asio::detached);
  }
  std::string port() const { return std::to_string(acceptor_.local_endpoint().port()); }
  int accepted() const { return accepted_; }
  // Connections whose handshake the server has finished (the client finishes first).
  std::size_t established() const { return streams_.size(); }
  void close_all() {
    for (auto& stream : streams_) net::close_socket(*stream);
  }

 private:
  asio::awaitable<void> handshake(std::shared_ptr<net::TlsStream> stream) {
    ++accepted_;
    auto [hec] = co_await stream->async_handshake(ssl::stream_base::server, net::kNoThrow);
    if (!hec) streams_.push_back(std::move(stream));
  }

  tcp::acceptor acceptor_;
  int accepted_ = 0;
  std::vector<std::shared_ptr<net::TlsStream>> streams_;
};

class UpstreamPoolTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pki_ = std::make_unique<test_support::LoopbackPki>(); }
  static void TearDownTestSuite() { pki_.reset(); }

  void SetUp() override {
    auto server_tls = pki_->server();
    ASSERT_TRUE(server_tls);
    // No TLS 1.3 session tickets: they would wait unread on an idle client socket, which then
    // looks closed. A real connection reads them with its first response; these carry none.
    SSL_CTX_set_num_tickets(server_tls->native_handle(), 0);
    server_ = std::make_unique<TlsServer>(io_, server_tls);
    servers_ = std::make_unique<ServerSet>(
        std::vector<ServerAddress>{test_support::loopback_server(server_->port())},
        LbMode::RoundRobin);
    servers_->set_healthy(0, true);
    tls_ = pki_->upstream_tls();
    pool_ = std::make_unique<UpstreamPool>(io_.get_executor(), *servers_, tls_, metrics_);
  }

  static std::shared_ptr<ssl::context> client_context() { return pki_->client(); }

  // Runs the io_context until `work` is done (the server runs on it too).
  void run(asio::awaitable<void> work) {
    auto done = asio::co_spawn(io_, std::move(work), asio::use_future);
    while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io_.run_one();
    done.get();
  }
  // As the Forwarder takes a connection: an idle one if usable, else a new one.
  asio::awaitable<void> acquire_into(Identity identity, Resend resend, UpstreamConnectionPtr& out) {
    if ((out = pool_->reuse(0, identity, resend))) co_return;
    auto connection = co_await pool_->dial(0, identity);
    EXPECT_TRUE(connection) << connection.error().message;
    if (connection) out = std::move(*connection);
  }
  UpstreamConnectionPtr acquire(Identity identity = Identity::Hub, Resend resend = Resend::Never) {
    UpstreamConnectionPtr out;
    run(acquire_into(identity, resend, out));
    return out;
  }
  // Leaves one idle connection in the pool, which the server has since closed.
  void keep_a_connection_the_server_closed() {
    pool_->release(acquire());
    while (server_->established() < 1) io_.run_one();
    server_->close_all();  // on loopback, the FIN is queued on the idle socket when close() returns
    io_.poll();
  }
  std::string connections_metric(const char* how) {
    const std::string rendered = registry_.render();
    const std::string prefix = "node_yurthub_upstream_connections_total{server=\"" +
                               servers_->address(0).url + "\",event=\"" + how + "\"} ";
    const auto at = rendered.find(prefix);
    return at == std::string::npos
               ? "0"
               : rendered.substr(at + prefix.size(), rendered.find('\n', at) - at - prefix.size());
  }

  static inline std::unique_ptr<test_support::LoopbackPki> pki_;
  asio::io_context io_;
  base::TestClock clock_;
  base::MetricsRegistry registry_;
  HubMetrics metrics_{registry_};
  std::unique_ptr<TlsServer> server_;
  std::unique_ptr<ServerSet> servers_;
  net::UpstreamTls tls_;
  std::unique_ptr<UpstreamPool> pool_;
};

TEST_F(UpstreamPoolTest, AReleasedConnectionIsReused) {
  auto first = acquire();
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->reused);
  const UpstreamConnection* address = first.get();
  pool_->release(std::move(first));
  EXPECT_EQ(pool_->idle_count(), 1u);

  auto again = acquire();
  ASSERT_TRUE(again);
  EXPECT_EQ(again.get(), address);
  EXPECT_TRUE(again->reused);
  EXPECT_EQ(server_->accepted(), 1);
  EXPECT_EQ(connections_metric("reused"), "1");
  EXPECT_EQ(connections_metric("opened"), "1");
}

TEST_F(UpstreamPoolTest, AConnectionIdlePastTheTimeoutIsDialledAfresh) {
  pool_->release(acquire());
  clock_.advance(UpstreamPool::kIdleTimeout - std::chrono::seconds(1));
  pool_->release(acquire());  // still fresh enough: reused, and idle again from now
  EXPECT_EQ(server_->accepted(), 1);

  clock_.advance(UpstreamPool::kIdleTimeout);
  auto fresh = acquire();
  ASSERT_TRUE(fresh);
  EXPECT_FALSE(fresh->reused);
  EXPECT_EQ(server_->accepted(), 2);
  EXPECT_EQ(pool_->idle_count(), 0u);  // the stale one was closed, not kept
}

TEST_F(UpstreamPoolTest, ReapClosesIdleConnectionsPastTheTimeoutOnly) {
  pool_->release(acquire());
  pool_->reap();
  EXPECT_EQ(pool_->idle_count(), 1u);
  clock_.advance(UpstreamPool::kIdleTimeout);
  pool_->reap();
  EXPECT_EQ(pool_->idle_count(), 0u);
}

// The Forwarder sends a request with no body on a reused connection at once (hub/request_body.cc):
// net::write_at_once never waits, and a connection that could not take it all is closed, since
// part of a TLS record may have gone out. Here the server reads nothing, so its buffers fill.
TEST_F(UpstreamPoolTest, AWriteAtOnceThatCannotFinishClosesTheConnectionWithoutWaiting) {
  auto connection = acquire();
  ASSERT_TRUE(connection);
  const std::string head = "GET /api/v1/pods HTTP/1.1\r\nHost: apiserver\r\n\r\n";
  EXPECT_TRUE(net::write_at_once(connection->stream, asio::buffer(head)));

  const std::string block(64 * 1024, 'x');
  int taken = -1;  // writes the socket took before the first it could not finish
  ASSERT_TRUE(net::test_support::finishes_without_waiting(
      [&] {
        for (int i = 0; i < 10000 && taken < 0; ++i) {
          if (!net::write_at_once(connection->stream, asio::buffer(block))) taken = i;
        }
      },
      connection->stream))
      << "a write at once waited for the server to read";
  EXPECT_GT(taken, 0) << "the socket never filled up";
  EXPECT_FALSE(boost::beast::get_lowest_layer(connection->stream).socket().is_open());
}

TEST_F(UpstreamPoolTest, AConnectionTheServerClosedIsNotReused) {
  keep_a_connection_the_server_closed();
  auto fresh = acquire();
  ASSERT_TRUE(fresh);
  EXPECT_FALSE(fresh->reused);
  EXPECT_EQ(server_->accepted(), 2);
}

// A request without a body is sent again on a fresh connection if a kept one turns out closed
// (ForwarderStreamsTest.AKeptConnectionTheApiserverClosedIsRetriedOnceOnAFreshOne), so a
// connection used within the last second is handed out without the poll's syscall.
TEST_F(UpstreamPoolTest, AConnectionUsedWithinASecondIsNotPolledForARequestThatCanBeResent) {
  keep_a_connection_the_server_closed();
  auto unpolled = acquire(Identity::Hub, Resend::OnClose);
  ASSERT_TRUE(unpolled);
  EXPECT_TRUE(unpolled->reused);
  EXPECT_EQ(server_->accepted(), 1);
}

TEST_F(UpstreamPoolTest, AConnectionIdleForASecondIsPolledEvenForARequestThatCanBeResent) {
  keep_a_connection_the_server_closed();
  clock_.advance(UpstreamPool::kUnpolledIdle);
  auto fresh = acquire(Identity::Hub, Resend::OnClose);
  ASSERT_TRUE(fresh);
  EXPECT_FALSE(fresh->reused);
  EXPECT_EQ(server_->accepted(), 2);
}

TEST_F(UpstreamPoolTest, AConnectionWithBytesLeftUnreadIsNeverReused) {
  auto connection = acquire();
  const std::string stray = "HTTP/1.1 408 Request Timeout\r\n";
  connection->buffer.commit(
      asio::buffer_copy(connection->buffer.prepare(stray.size()), asio::buffer(stray)));
  pool_->release(std::move(connection));
  auto fresh = acquire(Identity::Hub, Resend::OnClose);
  ASSERT_TRUE(fresh);
  EXPECT_FALSE(fresh->reused);
}

TEST_F(UpstreamPoolTest, ReapClosesAConnectionTheServerClosed) {
  keep_a_connection_the_server_closed();
  for (int i = 0; i < 1000 && pool_->idle_count() != 0; ++i) {
    io_.poll();
    pool_->reap();
  }
  EXPECT_EQ(pool_->idle_count(), 0u);
}

TEST_F(UpstreamPoolTest, ARenewedCertificateRetiresConnectionsMadeWithTheOldOne) {
  pool_->release(acquire());
  tls_.hub_identity->replace(client_context());
  auto fresh = acquire();
  ASSERT_TRUE(fresh);
  EXPECT_FALSE(fresh->reused);
  EXPECT_EQ(fresh->context, tls_.hub_identity->get());
  EXPECT_EQ(server_->accepted(), 2);
}

TEST_F(UpstreamPoolTest, EachIdentityHasItsOwnConnections) {
  pool_->release(acquire(Identity::Hub));
  auto bearer = acquire(Identity::Bearer);
  ASSERT_TRUE(bearer);
  EXPECT_FALSE(bearer->reused);
  EXPECT_EQ(bearer->context, tls_.anonymous);  // no client certificate for a caller's token
  EXPECT_EQ(pool_->idle_count(), 1u);
}

TEST_F(UpstreamPoolTest, NoConnectionIsKeptForAnUnhealthyServer) {
  auto connection = acquire();
  pool_->release(acquire());
  servers_->set_healthy(0, false);
  pool_->release(std::move(connection));
  EXPECT_EQ(pool_->idle_count(), 1u);
  pool_->drop_server(0);
  EXPECT_EQ(pool_->idle_count(), 0u);
}

TEST_F(UpstreamPoolTest, IdleConnectionsAreBoundedPerServerAndIdentity) {
  std::vector<UpstreamConnectionPtr> open;
  for (std::size_t i = 0; i < UpstreamPool::kMaxIdlePerKey + 2; ++i) open.push_back(acquire());
  const UpstreamConnection* newest = open.back().get();
  for (auto& connection : open) pool_->release(std::move(connection));
  EXPECT_EQ(pool_->idle_count(), UpstreamPool::kMaxIdlePerKey);
  EXPECT_EQ(acquire().get(), newest);  // the newest is reused first; the oldest were closed
}

}  // namespace
}  // namespace yurthub::hub
