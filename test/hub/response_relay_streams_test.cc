// ResponseRelay (hub/response_relay.h) over in-memory streams (test/net/memory_stream.h): the
// relay the hub runs, on a real Worker's io_context, between a client and an apiserver that are
// each the other end of a pipe the test holds. No socket, no sleep: the test writes the
// apiserver's bytes, closes ends, and polls the io_context until nothing more is ready. The head
// is read and the response planned as the Forwarder does (limit_response_parser, plan_response).
#include "hub/response_relay_impl.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/beast/http/read.hpp>

#include "hub/response_plan.h"
#include "test/hub/memory_upstreams.h"
#include "test/hub/memory_worker.h"
#include "test/hub/recording_tap.h"
#include "test/net/chunked.h"
#include "test/net/memory_stream.h"

namespace yurthub::hub {
namespace {

using test_support::chunk;
using test_support::MemoryStream;
using test_support::MemoryUpstream;
using test_support::MemoryUpstreams;
using test_support::RecordingTap;

// The head of an apiserver's watch response.
const std::string kWatchHead =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";

std::string event(const std::string& name, int rv) {
  return R"({"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
         R"(","namespace":"default","resourceVersion":")" + std::to_string(rv) + R"("}}})" + "\n";
}

class ResponseRelayTest : public ::testing::Test {
 protected:
  ResponseRelayTest() {
    auto [client_end, client_peer] = hub_.pipe();
    auto [up_end, up_peer] = hub_.pipe();
    client_ = std::make_shared<ClientConnection<MemoryStream>>(io().get_executor(),
                                                               std::move(client_end));
    upstream_ = std::make_unique<MemoryUpstream>(std::move(up_end));
    client_peer_.emplace(std::move(client_peer));
    apiserver_.emplace(std::move(up_peer));
  }

  boost::asio::io_context& io() { return hub_.io(); }
  void settle() { hub_.settle(); }

  // Starts relaying what the apiserver answers `method target` from `user_agent`, as the
  // Forwarder would: the cache reads the response (RequestPlan::cache) and the client keeps its
  // connection open.
  void start(const std::string& method, const std::string& target) {
    info_ = kube::classify_request(method, target, "kubelet/v1.26.1");
    boost::asio::co_spawn(io(), relay(), [this](const std::exception_ptr& e, ForwardResult r) {
      if (e) std::rethrow_exception(e);
      result_ = r;
    });
  }

  // What the client has received so far.
  std::string client_got() {
    client_received_ += client_peer_->take_written();
    return client_received_;
  }

  test_support::MemoryWorker hub_;
  MemoryUpstreams pool_{hub_.io().get_executor()};  // where a clean connection goes back
  std::shared_ptr<ClientConnection<MemoryStream>> client_;
  std::unique_ptr<MemoryUpstream> upstream_;
  std::optional<MemoryStream> client_peer_;  // the client's end
  std::optional<MemoryStream> apiserver_;    // the apiserver's end
  kube::RequestInfo info_;
  RecordingTap tap_;
  std::string client_received_;
  std::optional<ForwardResult> result_;

 private:
  boost::asio::awaitable<ForwardResult> relay() {
    ActiveScope scope(client_->active, upstream_.get(), 0);
    ResponseParser rp(std::piecewise_construct, std::tuple<>{},
                      std::tuple{client_->response_arena.fresh()});
    limit_response_parser(rp, false);
    auto [ec, n] = co_await boost::beast::http::async_read_header(
        upstream_->stream, upstream_->buffer, rp, net::kNoThrow);
    EXPECT_FALSE(ec) << ec.message();
    const RequestPlan request{.cache = true};
    const ClientSide side{
        .version = 11, .keep_alive = true, .long_running = info_.is_long_running()};
    const ResponsePlan plan = plan_response(request, response_head_facts(rp, true), side);
    ResponseRelay<MemoryStream, MemoryUpstreams> relay(client_, *hub_.worker, pool_, info_,
                                                       std::move(upstream_), rp);
    co_return co_await relay.relay(plan, &tap_, nullptr, 11, ForwardResult{});
  }
};

TEST_F(ResponseRelayTest, AListReachesTheClientAsSentAndTheCacheWhole) {
  std::string body = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},)"
                     R"("items":[)";
  for (int i = 0; i < 800; ++i) body += (i ? "," : "") + event("web-" + std::to_string(i), i);
  body += "]}";
  ASSERT_GT(body.size(), 2 * kRelayBufferBytes);  // more than one relay buffer's worth
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n";
  start("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-1");
  apiserver_->write(head + body.substr(0, 1000));
  settle();
  EXPECT_FALSE(result_);  // the rest of the body is still to come
  apiserver_->write(body.substr(1000));
  settle();
  ASSERT_TRUE(result_);
  EXPECT_EQ(result_->status, 200u);
  EXPECT_TRUE(result_->keep_alive);
  EXPECT_FALSE(result_->stream_end());
  const std::string got = client_got();
  ASSERT_NE(got.find("\r\n\r\n"), std::string::npos);
  EXPECT_EQ(got.substr(got.find("\r\n\r\n") + 4), body);
  EXPECT_NE(got.find("Content-Length: " + std::to_string(body.size())), std::string::npos);
  EXPECT_EQ(tap_.got, body);
  EXPECT_TRUE(tap_.ended && tap_.complete);
  EXPECT_EQ(pool_.idle.size(), 1u);  // read to its end: the connection may serve another request
}

TEST_F(ResponseRelayTest, AListInManySmallChunksReachesTheClientAndTheCacheWhole) {
  // The body is parsed in the upstream connection's buffer (InPlaceBody): every chunk header
  // between two pieces of body is closed up, whatever the chunks and the reads.
  std::string body = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},)"
                     R"("items":[)";
  for (int i = 0; i < 400; ++i) body += (i ? "," : "") + event("web-" + std::to_string(i), i);
  body += "]}";
  std::string wire = kWatchHead;
  for (std::size_t at = 0; at < body.size(); at += 7) wire += chunk(body.substr(at, 7));
  wire += "0\r\n\r\n";
  start("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-1");
  for (std::size_t at = 0; at < wire.size(); at += 5000) {
    apiserver_->write(wire.substr(at, 5000));
    settle();
  }
  ASSERT_TRUE(result_);
  EXPECT_EQ(result_->status, 200u);
  EXPECT_FALSE(result_->stream_end());
  // The client reads its chunked response as any HTTP client would.
  boost::beast::http::response_parser<boost::beast::http::string_body> client;
  client.eager(true);
  client.body_limit(boost::none);
  boost::system::error_code ec;
  const std::string got = client_got();
  client.put(boost::asio::buffer(got), ec);
  ASSERT_FALSE(ec) << ec.message();
  ASSERT_TRUE(client.is_done());
  EXPECT_EQ(client.get().body(), body);
  EXPECT_EQ(tap_.got, body);
  EXPECT_TRUE(tap_.ended && tap_.complete);
  EXPECT_EQ(pool_.idle.size(), 1u);
}

TEST_F(ResponseRelayTest, BytesAfterTheResponseKeepTheConnectionFromThePool) {
  // A response the hub did not ask for, after the one it did: the connection is not reused.
  start("GET", "/api/v1/namespaces/default/pods/web-0");
  const std::string body = R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0"}})";
  apiserver_->write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body +
                    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
  settle();
  ASSERT_TRUE(result_);
  EXPECT_EQ(result_->status, 200u);
  const std::string got = client_got();
  EXPECT_EQ(got.substr(got.find("\r\n\r\n") + 4), body);
  EXPECT_TRUE(pool_.idle.empty());
}

TEST_F(ResponseRelayTest, AWatchEventReachesTheClientBeforeTheNextArrives) {
  start("GET", "/api/v1/pods?watch=true&resourceVersion=7");
  apiserver_->write(kWatchHead);
  settle();
  EXPECT_NE(client_got().find("200 OK"), std::string::npos);  // the head goes out at once
  apiserver_->write(chunk(event("web-0", 8)));
  settle();
  EXPECT_NE(client_got().find(chunk(event("web-0", 8))), std::string::npos);
  EXPECT_FALSE(result_);
  apiserver_->write(chunk(event("web-1", 9)));
  settle();
  EXPECT_NE(client_got().find(chunk(event("web-1", 9))), std::string::npos);
  apiserver_->write("0\r\n\r\n");  // the apiserver ends the watch (its timeout)
  settle();
  ASSERT_TRUE(result_);
  EXPECT_EQ(result_->status, 200u);
  EXPECT_FALSE(result_->stream_end());
  EXPECT_TRUE(client_got().ends_with("0\r\n\r\n"));
  ASSERT_EQ(tap_.events.size(), 2u);
  EXPECT_TRUE(tap_.ended && tap_.complete);
}

TEST_F(ResponseRelayTest, AnApiserverDyingMidBodyCutsTheClientShort) {
  const std::string body(100000, 'x');
  start("GET", "/api/v1/namespaces/default/configmaps/big");
  // More than a relay buffer's worth arrives, then the apiserver dies.
  apiserver_->write(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
      "Content-Length: 100000\r\n\r\n" +
      body.substr(0, 40000));
  settle();
  apiserver_->close();
  settle();
  ASSERT_TRUE(result_);
  EXPECT_EQ(result_->status, 200u);  // the head had gone out
  EXPECT_EQ(result_->stream_end(), StreamEnd::UpstreamClosed);
  EXPECT_FALSE(result_->keep_alive);  // the session closes it: the client sees a short body
  const std::string got = client_got();
  const std::size_t sent = got.size() - (got.find("\r\n\r\n") + 4);
  EXPECT_GE(sent, kRelayBufferBytes);
  EXPECT_LE(sent, 40000u);
  EXPECT_TRUE(tap_.ended);
  EXPECT_FALSE(tap_.complete);  // the cache keeps nothing of it
  EXPECT_TRUE(pool_.idle.empty());
  EXPECT_EQ(
      hub_.metrics.upstream_errors.with({test_support::MemoryWorker::kServerUrl, "stream_broken"})
          .value(),
      1u);
}

TEST_F(ResponseRelayTest, AnApiserverDyingBeforeAnyOfTheBodyWentOutLeavesTheAnswerToTheForwarder) {
  start("GET", "/api/v1/namespaces/default/configmaps/small");
  apiserver_->write(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
      "Content-Length: 1000\r\n\r\n" +
      std::string(300, 'x'));
  settle();
  apiserver_->close();
  settle();
  ASSERT_TRUE(result_);
  // Nothing reached the client (a short body fills the relay buffer first): status 0 tells the
  // Forwarder to answer it, from the cache or with a Status.
  EXPECT_EQ(result_->status, 0u);
  EXPECT_EQ(result_->stream_end(), StreamEnd::UpstreamClosed);
  EXPECT_TRUE(client_got().empty());
  EXPECT_FALSE(tap_.complete);
}

TEST_F(ResponseRelayTest, AnApiserverDyingMidWatchEndsItWithTheEventsItSent) {
  start("GET", "/api/v1/pods?watch=true&resourceVersion=7");
  apiserver_->write(kWatchHead + chunk(event("web-0", 8)));
  settle();
  apiserver_->close();
  settle();
  ASSERT_TRUE(result_);
  EXPECT_EQ(result_->stream_end(), StreamEnd::UpstreamClosed);
  const std::string got = client_got();
  EXPECT_NE(got.find(chunk(event("web-0", 8))), std::string::npos);
  // A clean end: the client re-watches from its last event instead of re-listing.
  EXPECT_TRUE(got.ends_with("0\r\n\r\n"));
}

TEST_F(ResponseRelayTest, AClientLeavingEndsTheWatchWithoutWaitingForTheNextEvent) {
  start("GET", "/api/v1/pods?watch=true&resourceVersion=7");
  apiserver_->write(kWatchHead + chunk(event("web-0", 8)));
  settle();
  EXPECT_FALSE(result_);
  client_peer_->close();  // kubelet restarts
  settle();
  // The relay was waiting for the apiserver, which sent nothing more: the client watcher's read
  // ended the exchange, and the read from the apiserver was cancelled.
  ASSERT_TRUE(result_);
  EXPECT_EQ(result_->stream_end(), StreamEnd::ClientGone);
  EXPECT_FALSE(result_->keep_alive);
  EXPECT_TRUE(pool_.idle.empty());  // a stream cut short is never reused
}

TEST_F(ResponseRelayTest, AnApiserver429IsRelayedWithItsRetryAfterAndNotCached) {
  const std::string status =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"too many requests",)"
      R"("reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429})";
  start("GET", "/api/v1/namespaces/default/pods/web-0");
  apiserver_->write(
      "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
      "Retry-After: 1\r\nContent-Length: " +
      std::to_string(status.size()) + "\r\n\r\n" + status);
  settle();
  ASSERT_TRUE(result_);
  EXPECT_EQ(result_->status, 429u);
  EXPECT_TRUE(result_->keep_alive);
  const std::string got = client_got();
  EXPECT_TRUE(got.starts_with("HTTP/1.1 429 Too Many Requests\r\n")) << got;
  EXPECT_NE(got.find("Retry-After: 1\r\n"), std::string::npos) << got;
  EXPECT_TRUE(got.ends_with(status));
  EXPECT_TRUE(tap_.got.empty());  // the cache keeps the object, not the apiserver's refusal
  EXPECT_EQ(pool_.idle.size(), 1u);
}

}  // namespace
}  // namespace yurthub::hub
