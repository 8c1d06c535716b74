// The fixture of the request-path tests (proxy_test.cc, proxy_deadlines_test.cc): a real Worker
// (ProxySession -> Forwarder -> ResponseRelay, hub/) between a plain client socket and a
// scripted upstream, a TLS server on 127.0.0.1:0 that answers each request with raw bytes the
// test writes, pausing where told. That is how an apiserver that misbehaves is made here (one
// that dies mid-watch, breaks its chunking, answers something that is not HTTP or a header that
// never ends, or never answers), which the fake apiserver of the integration tests never does.
// No cache and no filters (cloud mode) unless a test sets filters_; no sleeps: pauses wait for
// the test.
#pragma once

#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>

#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "hub/connection_limits.h"
#include "hub/proxy_session.h"
#include "hub/worker.h"
#include "net/http_io.h"
#include "net/streams.h"
#include "test/base/poll.h"
#include "test/hub/loopback_pki.h"
#include "test/net/chunked.h"

namespace yurthub::hub::proxy_fixture {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;
using namespace std::chrono_literals;

// One step of an upstream answer: bytes to write, a pause until the test calls release(), or the
// end of the connection.
struct Step {
  enum Kind { Write, Pause, Close } kind = Write;
  std::string bytes;
};
inline Step write(std::string bytes) { return {Step::Write, std::move(bytes)}; }
inline Step pause() { return {Step::Pause, {}}; }
inline Step close() { return {Step::Close, {}}; }

struct Received {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;
  std::string body;
};

using ::yurthub::test_support::chunk;
inline const char* const kWatchHeader =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
inline std::string event(const std::string& name) {
  return R"({"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
         R"(","resourceVersion":"1"}}})" + std::string("\n");
}
inline std::string json_response(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

class ScriptedUpstream {
 public:
  using Script = std::function<std::vector<Step>(const Received&)>;

  ScriptedUpstream(std::shared_ptr<asio::ssl::context> tls, Script script)
      : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}),
        script_(std::move(script)),
        permit_(io_) {
    asio::co_spawn(io_,
                   test_support::accept_tls(acceptor_, std::move(tls),
                                            [this](auto stream) { return serve(stream); }),
                   asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~ScriptedUpstream() {
    io_.stop();
    thread_.join();
  }
  std::string port() const { return std::to_string(acceptor_.local_endpoint().port()); }
  // Lets one paused answer go on.
  void release() {
    asio::post(io_, [this] {
      ++permits_;
      permit_.cancel();
    });
  }
  int accepted() const { return accepted_; }
  std::vector<Received> received() const {
    std::lock_guard lock(mutex_);
    return received_;
  }
  // The hub closed a connection this server was pausing on (a client left).
  bool saw_hub_close() const { return hub_closed_; }

 private:
  asio::awaitable<void> serve(std::shared_ptr<net::TlsStream> stream) {
    ++accepted_;
    auto [hec] = co_await stream->async_handshake(asio::ssl::stream_base::server, net::kNoThrow);
    if (hec) co_return;
    boost::beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> request;
      auto [rec, n] = co_await http::async_read(*stream, buffer, request, net::kNoThrow);
      if (rec) co_return;
      Received r{
          std::string(request.method_string()), std::string(request.target()), {}, request.body()};
      for (const auto& field : request) r.headers[std::string(field.name_string())] = field.value();
      std::vector<Step> steps;
      {
        std::lock_guard lock(mutex_);
        steps = script_(r);
        received_.push_back(std::move(r));
      }
      for (auto& step : steps) {
        if (step.kind == Step::Close) {
          net::close_socket(*stream);
          co_return;
        }
        if (step.kind == Step::Pause) {
          if (!co_await wait_for_permit(*stream)) co_return;
          continue;
        }
        auto [wec, w] =
            co_await asio::async_write(*stream, asio::buffer(step.bytes), net::kNoThrow);
        if (wec) co_return;
      }
    }
  }
  // False when the hub closed the connection meanwhile.
  asio::awaitable<bool> wait_for_permit(net::TlsStream& stream) {
    while (permits_ == 0) {
      // A pause also ends when the hub closes the connection: poll it on each wake.
      permit_.expires_after(20ms);
      co_await permit_.async_wait(net::kNoThrow);
      pollfd pfd{boost::beast::get_lowest_layer(stream).socket().native_handle(), POLLIN, 0};
      if (::poll(&pfd, 1, 0) == 1) {
        char byte;
        if (::recv(pfd.fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
          hub_closed_ = true;
          co_return false;
        }
      }
    }
    --permits_;
    co_return true;
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  Script script_;
  asio::steady_timer permit_;
  int permits_ = 0;
  std::atomic<int> accepted_{0};
  std::atomic<bool> hub_closed_{false};
  mutable std::mutex mutex_;
  std::vector<Received> received_;
  std::thread thread_;
};

// A blocking client with a receive timeout, so that a hub that never answers fails the test.
class Client {
 public:
  explicit Client(unsigned short port) : socket_(io_) {
    socket_.connect({asio::ip::make_address("127.0.0.1"), port});
    timeval timeout{10, 0};
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  void send(const std::string& bytes) { asio::write(socket_, asio::buffer(bytes)); }
  void get(const std::string& target) {
    send("GET " + target + " HTTP/1.1\r\nHost: hub\r\nUser-Agent: kubelet/v1.26.0\r\n\r\n");
  }
  // Reads until `text` has arrived (true) or the connection ended or timed out (false).
  bool read_until(const std::string& text) {
    while (received_.find(text) == std::string::npos) {
      if (!read_more()) return false;
    }
    return true;
  }
  // Reads until the hub closes the connection; false on a timeout.
  bool read_to_end() {
    while (read_more()) {
    }
    return ended_;
  }
  // One whole response (Content-Length or chunked), parsed.
  http::response<http::string_body> response() {
    http::response_parser<http::string_body> parser;
    parser.body_limit(64u << 20);
    boost::system::error_code ec;
    for (;;) {
      if (!received_.empty()) {
        const std::size_t used = parser.put(asio::buffer(received_), ec);
        received_.erase(0, used);
        if (ec == http::error::need_more) ec = {};
        if (ec || parser.is_done()) break;
        if (used != 0) continue;
      }
      if (!read_more()) break;
    }
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(parser.is_done());
    return parser.release();
  }
  const std::string& received() const { return received_; }
  // True if nothing arrives, and the hub does not close, for `period` (real time: the hub's
  // thread gets that long to act on a clock a test just moved).
  bool quiet_for(std::chrono::milliseconds period) {
    pollfd pfd{socket_.native_handle(), POLLIN, 0};
    return ::poll(&pfd, 1, static_cast<int>(period.count())) == 0;
  }

 private:
  bool read_more() {
    char data[16384];
    const ssize_t n = ::recv(socket_.native_handle(), data, sizeof data, 0);
    if (n == 0) ended_ = true;
    if (n <= 0) return false;
    received_.append(data, static_cast<std::size_t>(n));
    return true;
  }

  asio::io_context io_;
  tcp::socket socket_;
  std::string received_;
  bool ended_ = false;
};

// Filters that pass bodies through, refuse one with "garbage" in it, and are ready when told.
class PassThroughFilter : public ResponseFilter {
 public:
  FilterStatus feed(std::string_view bytes, std::string* out) override {
    if (bytes.find("garbage") != std::string_view::npos) return FilterStatus::Cut;
    out->append(bytes);
    return bytes.empty() ? FilterStatus::Hold : FilterStatus::Send;
  }
  FilterStatus event(std::string_view raw, std::string* out) override {
    out->append(raw).push_back('\n');
    return FilterStatus::Send;
  }
  void unframeable(std::string_view) override {}
  FilterStatus finish(std::string*) override { return FilterStatus::Send; }
  std::string_view cut_reason() const override { return "malformed JSON"; }
  bool reactive() const override { return false; }
  FilterStatus correct(std::string*) override { return FilterStatus::Hold; }
};
class StubFilters : public FilterHooks {
 public:
  std::unique_ptr<ResponseFilter> filter(const kube::RequestInfo&) override {
    return std::make_unique<PassThroughFilter>();
  }
  bool ready() const override { return ready_; }
  std::atomic<bool> ready_{true};
};

class ProxyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pki_ = std::make_unique<test_support::LoopbackPki>(); }
  static void TearDownTestSuite() { pki_.reset(); }

  void start(ScriptedUpstream::Script script) {
    auto server_tls = pki_->server();
    ASSERT_TRUE(server_tls);
    upstream_ = std::make_unique<ScriptedUpstream>(server_tls, std::move(script));
    options_.working_mode = WorkingMode::Cloud;
    options_.servers = {test_support::loopback_server(upstream_->port())};
    servers_ = std::make_unique<ServerSet>(options_.servers, LbMode::RoundRobin);
    servers_->set_healthy(0, true);
    tls_ = pki_->upstream_tls();
    shared_.reset(new SharedState{options_, *servers_, tls_, metrics_});
    shared_->connections = std::make_unique<ConnectionLimits>(64, 64);
    shared_->filters = filters_;
    shared_->filters_ready_wait = 100ms;
    worker_ = std::make_unique<Worker>(*shared_);
    acceptor_ = std::make_unique<tcp::acceptor>(
        worker_->io(), tcp::endpoint{asio::ip::make_address("127.0.0.1"), 0});
    asio::co_spawn(worker_->io(), accept(), asio::detached);
    worker_->start_thread();
  }
  void TearDown() override {
    if (worker_) {
      // As the Hub stops: drain (open streams end, idle connections close), wait for the
      // sessions, then stop the thread.
      worker_->post_drain();
      EXPECT_TRUE(eventually([&] { return worker_->session_count() == 0; }));
      worker_->stop();
      worker_->join();
    }
    acceptor_.reset();
    worker_.reset();
    upstream_.reset();
  }
  asio::awaitable<void> accept() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_->async_accept(worker_->io(), net::kNoThrow);
      if (ec) co_return;
      asio::co_spawn(worker_->io(), start_plain_session(std::move(socket), *worker_),
                     asio::detached);
    }
  }
  Client client() { return Client(acceptor_->local_endpoint().port()); }
  std::string metrics() { return registry_.render(); }
  // The session counts a request after its response went out: the client may be quicker.
  bool counted(const std::string& text) {
    return eventually([&] { return metrics().find(text) != std::string::npos; });
  }
  // Waits (bounded, 10 s) for what another thread makes true.
  static bool eventually(const std::function<bool()>& condition) {
    return ::yurthub::test_support::eventually(condition, 10s);
  }

  static inline std::unique_ptr<test_support::LoopbackPki> pki_;
  FilterHooks* filters_ = nullptr;  // set before start() to filter every response
  HubOptions options_;
  base::MetricsRegistry registry_;
  HubMetrics metrics_{registry_};
  net::UpstreamTls tls_;
  std::unique_ptr<ScriptedUpstream> upstream_;
  std::unique_ptr<ServerSet> servers_;
  std::unique_ptr<SharedState> shared_;
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<tcp::acceptor> acceptor_;  // on the worker's io_context
};

}  // namespace yurthub::hub::proxy_fixture
