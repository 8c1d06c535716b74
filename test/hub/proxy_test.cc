// The request path in one process against a scripted apiserver that misbehaves on cue (the
// fixture is test/hub/proxy_fixture.h): events forwarded one by one, an apiserver that dies
// mid-watch, breaks its chunking, answers something that is not HTTP or a header that never
// ends; keep-alive, hop-by-hop headers, the filters' wait and their errors.
#include "test/hub/proxy_fixture.h"

namespace yurthub::hub {
namespace {

using namespace proxy_fixture;
using namespace std::chrono_literals;

TEST_F(ProxyTest, AWatchIsForwardedEventByEvent) {
  start([](const Received&) {
    return std::vector<Step>{write(kWatchHeader + chunk(event("a"))), pause(),
                             write(chunk(event("b")) + "0\r\n\r\n")};
  });
  Client c = client();
  c.get("/api/v1/pods?watch=true");
  // The first event reaches the client while the apiserver still holds the second.
  ASSERT_TRUE(c.read_until(R"("name":"a")"));
  EXPECT_EQ(c.received().find(R"("name":"b")"), std::string::npos);
  upstream_->release();
  ASSERT_TRUE(c.read_until(R"("name":"b")"));
  ASSERT_TRUE(c.read_until("0\r\n\r\n"));  // and the stream ends cleanly
}

TEST_F(ProxyTest, AnApiserverDyingMidWatchEndsTheWatchAfterItsLastEvent) {
  start([](const Received&) {
    return std::vector<Step>{write(kWatchHeader + chunk(event("a"))), close()};
  });
  Client c = client();
  c.get("/api/v1/pods?watch=true");
  ASSERT_TRUE(c.read_to_end());
  // A watch the client can resume from the last event it saw ends cleanly
  // (docs/operations.md, "Errors clients see").
  EXPECT_NE(c.received().find(R"("name":"a")"), std::string::npos);
  EXPECT_TRUE(c.received().ends_with("0\r\n\r\n")) << c.received();
  EXPECT_TRUE(counted(R"(kind="stream_broken"} 1)")) << metrics();
}

TEST_F(ProxyTest, BrokenChunkingEndsTheWatchAfterTheEventsBeforeIt) {
  // The event and the broken chunk arrive together: the event still goes to the client.
  start([](const Received&) {
    return std::vector<Step>{write(kWatchHeader + chunk(event("a")) + "zz\r\nnot a chunk\r\n"),
                             pause()};
  });
  Client c = client();
  c.get("/api/v1/pods?watch=true");
  ASSERT_TRUE(c.read_to_end());
  EXPECT_NE(c.received().find(R"("name":"a")"), std::string::npos) << c.received();
  EXPECT_EQ(c.received().find("not a chunk"), std::string::npos);
  EXPECT_TRUE(c.received().ends_with("0\r\n\r\n")) << c.received();
  EXPECT_TRUE(counted(R"(kind="stream_broken"} 1)")) << metrics();
}

TEST_F(ProxyTest, AListBrokenOffAfterItStartedIsCutNotEnded) {
  const std::string items(300 * 1024, 'x');  // more than the relay buffer: some goes out
  start([&items](const Received&) {
    return std::vector<Step>{
        write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked"
              "\r\n\r\n" +
              chunk(R"({"kind":"PodList","items":[")" + items)),
        close()};
  });
  Client c = client();
  c.get("/api/v1/pods");
  ASSERT_TRUE(c.read_to_end());
  EXPECT_TRUE(c.received().starts_with("HTTP/1.1 200 OK")) << c.received().substr(0, 200);
  EXPECT_NE(c.received().find("xxxx"), std::string::npos);
  EXPECT_FALSE(c.received().ends_with("0\r\n\r\n"));
}

TEST_F(ProxyTest, AnAnswerThatIsNotHttpGetsAStatusAndTheHubServesOn) {
  int answered = 0;
  start([&answered](const Received&) {
    if (answered++ == 0) return std::vector<Step>{write("SSH-2.0-OpenSSH_9.2\r\n"), close()};
    return std::vector<Step>{write(json_response(R"({"kind":"PodList"})"))};
  });
  Client c = client();
  c.get("/api/v1/pods");
  auto bad = c.response();
  EXPECT_EQ(bad.result_int() / 100, 5u) << bad;
  EXPECT_NE(bad.body().find(R"("kind":"Status")"), std::string::npos) << bad.body();

  Client again = client();
  again.get("/api/v1/pods");
  auto good = again.response();
  EXPECT_EQ(good.result_int(), 200u);
  EXPECT_EQ(good.body(), R"({"kind":"PodList"})");
}

TEST_F(ProxyTest, AResponseHeaderThatNeverEndsGetsAStatus) {
  start([](const Received&) {
    std::string header = "HTTP/1.1 200 OK\r\n";
    for (int i = 0; i < 60000; ++i) header += "X-Padding-" + std::to_string(i) + ": yes\r\n";
    return std::vector<Step>{write(header), pause()};
  });
  Client c = client();
  c.get("/api/v1/pods");
  auto bad = c.response();
  EXPECT_EQ(bad.result_int() / 100, 5u) << bad;
  EXPECT_NE(bad.body().find(R"("kind":"Status")"), std::string::npos) << bad.body();
  EXPECT_EQ(bad.find("X-Padding-0"), bad.end());
}

TEST_F(ProxyTest, AResponseBrokenOffBeforeAnyOfItWasSentGetsAStatus) {
  start([](const Received&) {
    return std::vector<Step>{
        write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
              R"({"kind":"PodList")"),
        close()};
  });
  Client c = client();
  c.get("/api/v1/pods");
  auto response = c.response();
  EXPECT_EQ(response.result_int(), 503u);
  EXPECT_NE(response.body().find(R"("reason":"ServiceUnavailable")"), std::string::npos)
      << response.body();
  EXPECT_EQ(response.body().find("PodList"), std::string::npos);
}

TEST_F(ProxyTest, AClientLeavingAWatchClosesItsUpstreamConnection) {
  start([](const Received&) {
    return std::vector<Step>{write(kWatchHeader + chunk(event("a"))), pause()};
  });
  {
    Client c = client();
    c.get("/api/v1/pods?watch=true");
    ASSERT_TRUE(c.read_until(R"("name":"a")"));
  }
  EXPECT_TRUE(eventually([&] { return upstream_->saw_hub_close(); }));
}

TEST_F(ProxyTest, KeepAliveRequestsShareOneUpstreamConnection) {
  start([](const Received& r) { return std::vector<Step>{write(json_response(r.target))}; });
  Client c = client();
  for (const std::string target : {"/api/v1/pods", "/api/v1/nodes", "/api/v1/services"}) {
    c.get(target);
    EXPECT_EQ(c.response().body(), target);
  }
  EXPECT_EQ(upstream_->accepted(), 1);
}

TEST_F(ProxyTest, HopByHopHeadersStayWithTheHubAndTheBodyGoesOn) {
  start([](const Received&) { return std::vector<Step>{write(json_response("{}"))}; });
  Client c = client();
  const std::string body = R"({"metadata":{"labels":{"edge":"yes"}}})";
  c.send(
      "PATCH /api/v1/namespaces/default/pods/web HTTP/1.1\r\nHost: hub\r\n"
      "User-Agent: kubelet/v1.26.0\r\nContent-Type: application/merge-patch+json\r\n"
      "Connection: keep-alive, X-Secret\r\nX-Secret: 1\r\nKeep-Alive: timeout=5\r\n"
      "Proxy-Connection: keep-alive\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_EQ(c.response().result_int(), 200u);
  auto received = upstream_->received();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].method, "PATCH");
  EXPECT_EQ(received[0].body, body);
  EXPECT_EQ(received[0].headers.count("X-Secret"), 0u);
  EXPECT_EQ(received[0].headers.count("Keep-Alive"), 0u);
  EXPECT_EQ(received[0].headers.count("Proxy-Connection"), 0u);
  EXPECT_EQ(received[0].headers.at("Content-Type"), "application/merge-patch+json");
}

// The framing headers sent on are the parser's, not the client's: a Transfer-Encoding that is
// not chunked frames nothing (Beast reads no body) and must not reach the apiserver, where it
// would; a zero Content-Length is kept; a plain GET gets neither.
TEST_F(ProxyTest, ARequestGoesOnFramedByWhatTheHubReadNotByItsHeaders) {
  start([](const Received&) { return std::vector<Step>{write(json_response("{}"))}; });
  Client c = client();
  const std::string head =
      "GET /api/v1/pods HTTP/1.1\r\nHost: hub\r\nUser-Agent: kubelet/v1.26.0\r\n";
  c.send(head + "Transfer-Encoding: gzip\r\n\r\n");
  EXPECT_EQ(c.response().result_int(), 200u);
  c.send(head + "Content-Length: 0\r\n\r\n");
  EXPECT_EQ(c.response().result_int(), 200u);
  c.send(head + "\r\n");
  EXPECT_EQ(c.response().result_int(), 200u);
  auto received = upstream_->received();
  ASSERT_EQ(received.size(), 3u);
  EXPECT_EQ(received[0].headers.count("Transfer-Encoding"), 0u);
  EXPECT_EQ(received[0].headers.count("Content-Length"), 0u);
  EXPECT_EQ(received[1].headers.count("Transfer-Encoding"), 0u);
  EXPECT_EQ(received[1].headers["Content-Length"], "0");
  EXPECT_EQ(received[2].headers.count("Transfer-Encoding"), 0u);
  EXPECT_EQ(received[2].headers.count("Content-Length"), 0u);
}

// A local caller gets the node's identity as it is: its own Authorization (not a bearer token)
// and any Impersonate-* header stay with the hub, with or without an Authorization beside them.
TEST_F(ProxyTest, ALocalCallerCannotImpersonateWithTheNodesIdentity) {
  start([](const Received&) { return std::vector<Step>{write(json_response("{}"))}; });
  Client c = client();
  const std::string head = "GET /api/v1/secrets HTTP/1.1\r\nHost: hub\r\nUser-Agent: curl/8.0\r\n";
  c.send(head + "Impersonate-User: system:admin\r\nimpersonate-group: system:masters\r\n\r\n");
  EXPECT_EQ(c.response().result_int(), 200u);
  c.send(head + "Authorization: Basic YWRtaW46YWRtaW4=\r\nImpersonate-Uid: 0\r\n\r\n");
  EXPECT_EQ(c.response().result_int(), 200u);
  auto received = upstream_->received();
  ASSERT_EQ(received.size(), 2u);
  for (const auto& r : received) {
    for (const auto& [name, value] : r.headers) {
      EXPECT_FALSE(boost::beast::iequals(name.substr(0, 12), "impersonate-")) << name;
    }
    EXPECT_EQ(r.headers.count("Authorization"), 0u);
    EXPECT_EQ(r.headers.at("User-Agent"), "curl/8.0");
  }
}

TEST_F(ProxyTest, FilteredRequestsWaitForTheFiltersThenGet429) {
  StubFilters filters;
  filters.ready_ = false;
  filters_ = &filters;
  start([](const Received&) { return std::vector<Step>{write(json_response("{}"))}; });
  Client c = client();
  c.get("/api/v1/pods");
  auto response = c.response();
  EXPECT_EQ(response.result_int(), 429u);
  EXPECT_EQ(response[http::field::retry_after], "1");
  EXPECT_NE(response.body().find("filters are not ready"), std::string::npos) << response.body();
  EXPECT_TRUE(upstream_->received().empty());

  filters.ready_ = true;
  c.get("/api/v1/pods");
  EXPECT_EQ(c.response().result_int(), 200u);
}

TEST_F(ProxyTest, AResponseTheFiltersCannotReadGets502) {
  StubFilters filters;
  filters_ = &filters;
  start([](const Received&) {
    return std::vector<Step>{write(json_response(R"({"kind":"PodList","items":[garbage)"))};
  });
  Client c = client();
  c.get("/api/v1/pods");
  auto response = c.response();
  EXPECT_EQ(response.result_int(), 502u);
  EXPECT_NE(response.body().find(R"("kind":"Status")"), std::string::npos) << response.body();
  EXPECT_EQ(response.body().find("garbage"), std::string::npos);
  EXPECT_TRUE(counted(R"(node_yurthub_request_failures_total{reason="bad_upstream_response"} 1)"))
      << metrics();
  // One end reason per exchange: the cut the relay saw became this error; it is not a stream
  // that ended as well.
  EXPECT_EQ(metrics().find("node_yurthub_streams_ended_total{"), std::string::npos) << metrics();
}

TEST_F(ProxyTest, AFilteredWatchIsFramedIntoEventsAndCutWhereItStopsBeingJson) {
  // The hub frames the watch (hub/body_transform.cc) and hands the filter whole events: an event
  // split across two chunks arrives whole, and malformed JSON ends the stream without a last
  // chunk (so the client cannot take it for a clean end), after the events before it.
  StubFilters filters;
  filters_ = &filters;
  const std::string b = event("b");
  start([&b](const Received&) {
    return std::vector<Step>{write(kWatchHeader + chunk(event("a") + b.substr(0, 20))), pause(),
                             write(chunk(b.substr(20)) + chunk("{\"type\":]\n")), pause()};
  });
  Client c = client();
  c.get("/api/v1/pods?watch=true");
  ASSERT_TRUE(c.read_until(R"("name":"a")"));
  // Only the whole event went out; b's first bytes wait for the rest of it.
  const std::string& got = c.received();
  EXPECT_EQ(got.find(R"({"type")", got.find(R"("name":"a")")), std::string::npos) << got;
  upstream_->release();
  ASSERT_TRUE(c.read_to_end());
  EXPECT_NE(c.received().find(b), std::string::npos) << c.received();
  EXPECT_EQ(c.received().find(R"({"type":])"), std::string::npos);
  EXPECT_FALSE(c.received().ends_with("0\r\n\r\n")) << c.received();
}

}  // namespace
}  // namespace yurthub::hub
