// Forwarder (hub/forwarder.h) over in-memory streams: the whole exchange the hub runs for one
// request (server choice, the request going out with the hub's Host, the response relayed, the
// connection kept or dropped) between a client and apiservers that are the other ends of pipes
// the test holds. The apiserver connections come from test_support::MemoryUpstreams, each dial a
// new pipe. No socket, no sleep: the test writes bytes, closes ends, and polls the io_context
// until nothing more is ready. The request head is read and classified as ProxySession does.
#include "hub/client_response_writer_impl.h"
#include "hub/forwarder_impl.h"
#include "hub/forwarder_offline_impl.h"
#include "hub/forwarder_shared_impl.h"
#include "hub/response_relay_impl.h"

#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/beast/http/read.hpp>

#include "kube/bearer_token.h"
#include "test/hub/memory_upstreams.h"
#include "test/hub/memory_worker.h"
#include "test/net/chunked.h"
#include "test/net/memory_stream.h"

namespace yurthub::hub {
namespace {

using test_support::chunk;
using test_support::MemoryStream;
using test_support::MemoryUpstreams;
using test_support::MemoryWorker;

constexpr const char* kGetPod =
    "GET /api/v1/namespaces/default/pods/web-0 HTTP/1.1\r\nHost: 127.0.0.1:10261\r\n"
    "User-Agent: kubectl/v1.26.1\r\n\r\n";
constexpr const char* kPodBody = R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0"}})";

std::string ok(std::string_view body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

std::string body_of(const std::string& response) {
  const auto end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}

class ForwarderStreamsTest : public ::testing::Test {
 protected:
  ForwarderStreamsTest() { connect_client(); }
  explicit ForwarderStreamsTest(MemoryWorker::TwoServers two) : hub_(two) { connect_client(); }
  // A forward still waiting must end before the client connection whose memory its request
  // parser uses is gone: every end closes, and the forward runs to its end (a retry on a fresh
  // connection, which closing a kept one starts, is closed in turn).
  ~ForwarderStreamsTest() override {
    client_peer_->close();
    hub_.settle();
    for (std::size_t i = 0; i < pool_.dialled.size(); ++i) {
      pool_.dialled[i].end.close();
      hub_.settle();
    }
  }

  // Reads the client's next request head and forwards it, as ProxySession does. Done when
  // result_ is set.
  void forward_next() {
    result_.reset();
    boost::asio::co_spawn(hub_.io(), serve_one(), [](const std::exception_ptr& e) {
      if (e) std::rethrow_exception(e);
    });
  }
  // Sends `request` from the client and forwards it.
  void ask(const std::string& request) {
    client_peer_->write(request);
    forward_next();
    hub_.settle();
  }
  // What the client has received since the last call.
  std::string client_got() { return client_peer_->take_written(); }
  // The apiserver's end of the n-th connection the hub dialled.
  MemoryStream& apiserver(std::size_t n = 0) { return pool_.dialled.at(n).end; }
  // Whether the n-th connection carried a GET of pod web-0 (kGetPod) since the last look.
  bool asked_for_pod(std::size_t n = 0) {
    return apiserver(n).take_written().starts_with(
        "GET /api/v1/namespaces/default/pods/web-0 HTTP/1.1\r\n");
  }
  // Runs what is ready, after which the exchange must have ended with `status`; what the client
  // got.
  std::string finished_with(unsigned status) {
    hub_.settle();
    EXPECT_TRUE(result_);
    EXPECT_EQ(result_ ? result_->status : 0, status);
    return client_got();
  }
  // The n-th connection answers with the pod: the client gets it whole.
  void answer_with_pod(std::size_t n = 0) {
    apiserver(n).write(ok(kPodBody));
    EXPECT_EQ(body_of(finished_with(200)), kPodBody);
  }

  MemoryWorker hub_;
  MemoryUpstreams pool_{hub_.io().get_executor()};
  std::shared_ptr<ClientConnection<MemoryStream>> client_;
  std::optional<MemoryStream> client_peer_;  // the client's end
  std::optional<ForwardResult> result_;

 private:
  void connect_client() {
    auto [hub_end, client_end] = hub_.pipe();
    client_ = std::make_shared<ClientConnection<MemoryStream>>(hub_.io().get_executor(),
                                                               std::move(hub_end));
    client_peer_.emplace(std::move(client_end));
  }

  boost::asio::awaitable<void> serve_one() {
    RequestParser parser(std::piecewise_construct, std::tuple<>{},
                         std::tuple{client_->request_arena.fresh()});
    parser.header_limit(kMaxRequestHeaderBytes);
    parser.body_limit(kMaxRequestBodyBytes);
    auto [ec, n] = co_await boost::beast::http::async_read_header(client_->stream, client_->buffer,
                                                                  parser, net::kNoThrow);
    EXPECT_FALSE(ec) << ec.message();
    if (ec) co_return;
    auto& req = parser.get();
    const auto field = [&req](http::field f) {
      const auto value = req[f];
      return std::string_view(value.data(), value.size());
    };
    kube::RequestInfo info = kube::classify_request(
        std::string_view(req.method_string().data(), req.method_string().size()),
        std::string_view(req.target().data(), req.target().size()), field(http::field::user_agent));
    if (net::carries_bearer_token(req)) {
      info.bearer_token =
          std::string(kube::bearer_token(field(http::field::authorization)).value_or(""));
    }
    Forwarder<MemoryStream, MemoryUpstreams> forwarder(client_, *hub_.worker, pool_);
    result_ = co_await forwarder.forward(parser, info, req.keep_alive());
  }
};

TEST_F(ForwarderStreamsTest, AGetGoesOutWithTheApiserversHostAndItsConnectionServesTheNextOne) {
  ask(kGetPod);
  ASSERT_EQ(pool_.dialled.size(), 1u);
  const std::string sent = apiserver().take_written();
  EXPECT_TRUE(sent.starts_with("GET /api/v1/namespaces/default/pods/web-0 HTTP/1.1\r\n")) << sent;
  EXPECT_NE(sent.find("Host: apiserver.test:6443\r\n"), std::string::npos) << sent;
  EXPECT_FALSE(result_);  // waiting for the apiserver

  apiserver().write(ok(kPodBody));
  const std::string got = finished_with(200);
  ASSERT_TRUE(result_);
  EXPECT_TRUE(result_->keep_alive);
  EXPECT_TRUE(got.starts_with("HTTP/1.1 200 OK\r\n")) << got;
  EXPECT_EQ(body_of(got), kPodBody);
  ASSERT_EQ(pool_.idle.size(), 1u);  // read to its end: kept

  // The next request goes on the same connection: nothing is dialled.
  ask(kGetPod);
  EXPECT_EQ(pool_.dialled.size(), 1u);
  EXPECT_TRUE(asked_for_pod());
  answer_with_pod();
}

TEST_F(ForwarderStreamsTest, AKeptConnectionTheApiserverClosedIsRetriedOnceOnAFreshOne) {
  ask(kGetPod);
  answer_with_pod(0);
  ASSERT_EQ(pool_.idle.size(), 1u);
  apiserver(0).close();  // the apiserver's idle timeout

  ask(kGetPod);
  ASSERT_EQ(pool_.dialled.size(), 2u);  // the request went again, on a new connection
  EXPECT_TRUE(asked_for_pod(1));
  answer_with_pod(1);
}

TEST_F(ForwarderStreamsTest, AConnectionClosedBeforeTheAnswerGets503StatusAndIsNotKept) {
  ask(kGetPod);
  (void)apiserver().take_written();
  apiserver().close();
  const std::string got = finished_with(503);
  ASSERT_TRUE(result_);
  EXPECT_FALSE(result_->keep_alive);
  EXPECT_TRUE(got.starts_with("HTTP/1.1 503")) << got;
  EXPECT_NE(body_of(got).find(R"("kind":"Status")"), std::string::npos) << got;
  EXPECT_NE(body_of(got).find("closed the connection"), std::string::npos) << got;
  EXPECT_TRUE(pool_.idle.empty());
  EXPECT_EQ(hub_.metrics.upstream_errors.with({MemoryWorker::kServerUrl, "closed"}).value(), 1u);
}

class TwoServersTest : public ForwarderStreamsTest {
 protected:
  TwoServersTest() : ForwarderStreamsTest(MemoryWorker::TwoServers{}) {}
};

TEST_F(TwoServersTest, AnApiserverThatCannotBeReachedIsSkippedForTheNextHealthyOne) {
  pool_.unreachable = {0};
  ask(kGetPod);
  ASSERT_EQ(pool_.dialled.size(), 1u);
  EXPECT_EQ(pool_.dialled[0].server, 1u);
  const std::string sent = apiserver().take_written();
  EXPECT_NE(sent.find("Host: apiserver-2.test:6443\r\n"), std::string::npos) << sent;
  answer_with_pod();
  EXPECT_EQ(hub_.metrics.upstream_errors.with({MemoryWorker::kServerUrl, "connect"}).value(), 1u);
}

TEST_F(TwoServersTest, NoApiserverReachableGets503StatusNamingTheLastError) {
  pool_.unreachable = {0, 1};
  ask(kGetPod);
  const std::string got = finished_with(503);
  EXPECT_TRUE(got.starts_with("HTTP/1.1 503")) << got;
  EXPECT_NE(body_of(got).find("unable to reach the apiserver"), std::string::npos) << got;
  EXPECT_NE(body_of(got).find("connect server 1: connection refused"), std::string::npos) << got;
  EXPECT_TRUE(pool_.dialled.empty());
}

TEST_F(ForwarderStreamsTest, ABearerCallerNeverGetsAConnectionThatPresentsTheHubsCertificate) {
  ask(kGetPod);  // no token: the hub's certificate
  ASSERT_EQ(pool_.dialled.size(), 1u);
  EXPECT_EQ(pool_.dialled[0].identity, Identity::Hub);
  EXPECT_EQ(apiserver(0).take_written().find("Authorization"), std::string::npos);
  answer_with_pod(0);
  ASSERT_EQ(pool_.idle.size(), 1u);

  // A caller with its own token: a connection of its own, though the hub's is idle.
  ask("GET /api/v1/namespaces/default/pods/web-0 HTTP/1.1\r\nHost: 127.0.0.1:10261\r\n"
      "Authorization: Bearer made-up\r\nUser-Agent: kubectl/v1.26.1\r\n\r\n");
  ASSERT_EQ(pool_.dialled.size(), 2u);
  EXPECT_EQ(pool_.dialled[1].identity, Identity::Bearer);
  EXPECT_NE(apiserver(1).take_written().find("Authorization: Bearer made-up\r\n"),
            std::string::npos);
  answer_with_pod(1);

  ask(kGetPod);  // the hub's connection again, not the bearer's
  EXPECT_EQ(pool_.dialled.size(), 2u);
  EXPECT_TRUE(asked_for_pod(0));
  EXPECT_TRUE(apiserver(1).take_written().empty());
}

TEST_F(ForwarderStreamsTest, ARequestBodyIsStreamedToTheApiserverAsItArrives) {
  const std::string body = R"({"metadata":{"labels":{"a":"b"}}})";
  ask("PATCH /api/v1/namespaces/default/pods/web-0 HTTP/1.1\r\nHost: 127.0.0.1:10261\r\n"
      "User-Agent: kubectl/v1.26.1\r\nContent-Type: application/merge-patch+json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, 10));
  ASSERT_EQ(pool_.dialled.size(), 1u);
  std::string sent = apiserver().take_written();
  EXPECT_TRUE(sent.starts_with("PATCH /api/v1/namespaces/default/pods/web-0 HTTP/1.1\r\n"));
  EXPECT_EQ(body_of(sent), body.substr(0, 10));  // what arrived went out
  client_peer_->write(body.substr(10));
  hub_.settle();
  EXPECT_EQ(apiserver().take_written(), body.substr(10));
  answer_with_pod();
  EXPECT_EQ(result_->request_bytes, body.size());
}

TEST_F(ForwarderStreamsTest, AWatchReachesTheClientEventByEventUntilTheClientLeaves) {
  ask("GET /api/v1/namespaces/default/pods?watch=true HTTP/1.1\r\nHost: 127.0.0.1:10261\r\n"
      "User-Agent: kubectl/v1.26.1\r\n\r\n");
  ASSERT_EQ(pool_.dialled.size(), 1u);
  EXPECT_NE(apiserver().take_written().find("watch=true"), std::string::npos);
  const std::string event =
      R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"web-0"}}})"
      "\n";
  apiserver().write(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
      chunk(event));
  hub_.settle();
  const std::string got = client_got();
  EXPECT_TRUE(got.starts_with("HTTP/1.1 200 OK\r\n")) << got;
  EXPECT_NE(got.find(event), std::string::npos) << got;  // before any next event
  EXPECT_FALSE(result_);

  client_peer_->close();
  hub_.settle();
  ASSERT_TRUE(result_);
  EXPECT_EQ(result_->stream_end(), StreamEnd::ClientGone);
  EXPECT_FALSE(result_->keep_alive);
  EXPECT_TRUE(pool_.idle.empty());  // a stream cut short is never kept
}

// A list of more than two relay buffers: the first goes out before the apiserver dies.
std::string long_list() {
  std::string body = R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":[)";
  while (body.size() < 3 * kRelayBufferBytes) {
    body += std::string(body.back() == '[' ? "" : ",") + R"({"metadata":{"name":"p"}})";
  }
  return body + "]}";
}

std::string list_head(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n";
}

constexpr const char* kListPods =
    "GET /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: 127.0.0.1:10261\r\n"
    "User-Agent: kubectl/v1.26.1\r\n\r\n";

TEST_F(ForwarderStreamsTest, AListWhoseApiserverDiesMidBodyIsCutShortNotCompleted) {
  const std::string body = long_list();
  ask(kListPods);
  apiserver().write(list_head(body) + body.substr(0, kRelayBufferBytes + 100));
  hub_.settle();
  EXPECT_FALSE(result_);
  apiserver().close();
  hub_.settle();
  ASSERT_TRUE(result_);
  EXPECT_EQ(result_->stream_end(), StreamEnd::UpstreamClosed);
  EXPECT_FALSE(result_->keep_alive);  // the session closes the connection under the short body
  const std::string got = client_got();
  EXPECT_TRUE(got.starts_with("HTTP/1.1 200 OK\r\n")) << got.substr(0, 200);
  EXPECT_GE(body_of(got).size(), kRelayBufferBytes);  // what arrived went out
  EXPECT_LT(body_of(got).size(), body.size());  // the client sees a short body, never a whole one
  EXPECT_TRUE(pool_.idle.empty());
  EXPECT_EQ(hub_.metrics.upstream_errors.with({MemoryWorker::kServerUrl, "stream_broken"}).value(),
            1u);
}

TEST_F(ForwarderStreamsTest, AnApiserverDyingBeforeAnyOfTheBodyWentOutGets503Status) {
  const std::string body = long_list();
  ask(kListPods);
  apiserver().write(list_head(body) + body.substr(0, 2000));  // less than a relay buffer: held
  hub_.settle();
  apiserver().close();
  const std::string got = finished_with(503);
  ASSERT_TRUE(result_);
  EXPECT_FALSE(result_->keep_alive);
  EXPECT_TRUE(got.starts_with("HTTP/1.1 503")) << got;  // not a 200 with a truncated list
  EXPECT_NE(body_of(got).find("closed the connection before its answer was complete"),
            std::string::npos)
      << got;
  EXPECT_TRUE(pool_.idle.empty());
}

TEST_F(ForwarderStreamsTest, AnApiservers429GoesToTheClientWithItsRetryAfter) {
  ask(kGetPod);
  const std::string status =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429})";
  apiserver().write(
      "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
      "Retry-After: 7\r\nContent-Length: " +
      std::to_string(status.size()) + "\r\n\r\n" + status);
  const std::string got = finished_with(429);
  EXPECT_TRUE(got.starts_with("HTTP/1.1 429")) << got;
  EXPECT_NE(got.find("Retry-After: 7\r\n"), std::string::npos) << got;
  EXPECT_EQ(body_of(got), status);
  EXPECT_EQ(pool_.idle.size(), 1u);  // an answer read whole: the connection is kept
}

}  // namespace
}  // namespace yurthub::hub
