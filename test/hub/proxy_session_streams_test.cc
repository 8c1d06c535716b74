// ProxySession and its Forwarder (hub/proxy_session.h, hub/forwarder.h) over an in-memory client
// stream (test/net/memory_stream.h), on a real Worker whose one apiserver is unhealthy, so nothing
// is ever dialled: the paths where the hub answers by itself. No socket, no sleep: the test writes
// the client's bytes and polls the io_context until nothing more is ready.
#include "hub/client_response_writer_impl.h"
#include "hub/forwarder_impl.h"
#include "hub/forwarder_offline_impl.h"
#include "hub/forwarder_shared_impl.h"
#include "hub/proxy_session_followers_impl.h"
#include "hub/proxy_session_impl.h"
#include "hub/request_body_impl.h"
#include "hub/response_relay_impl.h"

#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "test/hub/memory_worker.h"
#include "test/net/memory_stream.h"

namespace yurthub::hub {
namespace {

using test_support::MemoryStream;

class ProxySessionStreamsTest : public ::testing::Test {
 protected:
  ProxySessionStreamsTest() : hub_(/*server_healthy=*/false) {
    hub_.options.max_requests_in_flight = 1;
    auto [hub_end, client_end] = hub_.pipe();
    client_.emplace(std::move(client_end));
    auto connection = std::make_shared<ClientConnection<MemoryStream>>(hub_.io().get_executor(),
                                                                       std::move(hub_end));
    auto session =
        std::make_shared<ProxySession<MemoryStream>>(std::move(connection), *hub_.worker, "proxy");
    boost::asio::co_spawn(hub_.io(), ProxySession<MemoryStream>::run(std::move(session)),
                          boost::asio::detached);
    hub_.settle();  // waiting for the first request's header
  }

  // Sends `request` and returns what the hub answered to it.
  std::string ask(const std::string& request) {
    client_->write(request);
    hub_.settle();
    return client_->take_written();
  }

  test_support::MemoryWorker hub_;
  std::optional<MemoryStream> client_;  // the client's end
};

constexpr const char* kGetPod =
    "GET /api/v1/namespaces/default/pods/web-0 HTTP/1.1\r\nHost: 127.0.0.1:10261\r\n"
    "User-Agent: kubectl/v1.26.1\r\n\r\n";

TEST_F(ProxySessionStreamsTest, ARequestPastMaxRequestsInFlightGets429AndTheConnectionGoesOn) {
  hub_.shared->in_flight = 1;  // another request holds the one slot
  const std::string refused = ask(kGetPod);
  EXPECT_TRUE(refused.starts_with("HTTP/1.1 429 Too Many Requests\r\n")) << refused;
  EXPECT_NE(refused.find("Retry-After: 1\r\n"), std::string::npos) << refused;
  EXPECT_NE(refused.find(R"("reason":"TooManyRequests")"), std::string::npos) << refused;
  EXPECT_NE(refused.find("1 requests in flight"), std::string::npos) << refused;
  EXPECT_EQ(hub_.shared->in_flight, 1);  // the refused request gave its count back

  // The slot is free again: the same connection's next request is served (by the Forwarder,
  // which finds no healthy apiserver and nothing cached: the apiserver's 503 Status).
  hub_.shared->in_flight = 0;
  const std::string served = ask(kGetPod);
  EXPECT_TRUE(served.starts_with("HTTP/1.1 503 Service Unavailable\r\n")) << served;
  EXPECT_NE(served.find("every apiserver is unhealthy"), std::string::npos) << served;
  EXPECT_EQ(hub_.worker->session_count(), 1u);
  EXPECT_EQ(hub_.metrics.failures.with({"too_many_requests"}).value(), 1u);
}

TEST_F(ProxySessionStreamsTest, AnOversizedHeaderGets431AndTheConnectionCloses) {
  const std::string request = "GET /api/v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " +
                              std::string(kMaxRequestHeaderBytes, 'a') + "\r\n\r\n";
  const std::string answer = ask(request);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 431 ")) << answer.substr(0, 200);
  EXPECT_TRUE(client_->other_end_done());  // the hub closed the connection
  EXPECT_EQ(hub_.worker->session_count(), 0u);
}

TEST_F(ProxySessionStreamsTest, AClientVanishingMidHeaderEndsTheSessionSilently) {
  client_->write("GET /api/v1/pods HTTP/1.1\r\nHost: 12");
  hub_.settle();
  EXPECT_EQ(hub_.worker->session_count(), 1u);  // still waiting for the rest of the header
  client_->close();
  hub_.settle();
  EXPECT_EQ(hub_.worker->session_count(), 0u);
}

}  // namespace
}  // namespace yurthub::hub
