// JournalReplay (cache/journal_replay.h) against a scripted stand-in for the hub's proxy port: a
// real store, writer and journal, entries journaled as OfflineWrites journals them, and an HTTP
// server on 127.0.0.1:0 that records each replayed request and answers what the test scripts.
// Checks the order rules, the headers a replay carries, the outcome of each status, the re-base
// of a stale update and that nothing is sent while offline. No fixed sleeps: the replay's own
// periods are a few milliseconds and the tests wait for conditions.
#include <atomic>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include "cache/journal.h"
#include "cache/journal_replay.h"
#include "net/http_io.h"
#include "test/base/poll.h"
#include "test/cache/cache_test_support.h"

namespace yurthub::cache {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

struct Seen {
  std::string method;
  std::string target;
  std::string user_agent;
  std::string authorization;
  std::string replay_token;
  std::string body;
};

struct Answer {
  unsigned status = 200;
  std::string body = "{}";
};

// Answers each request with script(request, how many came before it), one request a connection.
class ScriptedProxy {
 public:
  using Script = std::function<Answer(const Seen&, std::size_t)>;

  ScriptedProxy(asio::io_context& io, Script script)
      : acceptor_(io, {asio::ip::make_address("127.0.0.1"), 0}), script_(std::move(script)) {
    asio::co_spawn(io, accept(), asio::detached);
  }
  unsigned short port() const { return acceptor_.local_endpoint().port(); }
  std::vector<Seen> seen() const {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  std::size_t count() const {
    std::lock_guard lock(mutex_);
    return seen_.size();
  }

 private:
  asio::awaitable<void> accept() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(net::kNoThrow);
      if (ec) co_return;
      co_await serve(beast::tcp_stream(std::move(socket)));
    }
  }
  asio::awaitable<void> serve(beast::tcp_stream stream) {
    beast::flat_buffer buffer;
    http::request<http::string_body> request;
    auto [rec, read] = co_await http::async_read(stream, buffer, request, net::kNoThrow);
    if (rec) co_return;
    Seen seen{std::string(request.method_string()),
              std::string(request.target()),
              std::string(request[http::field::user_agent]),
              std::string(request[http::field::authorization]),
              std::string(request[hub::kReplayHeader]),
              request.body()};
    Answer answer;
    {
      std::lock_guard lock(mutex_);
      answer = script_(seen, seen_.size());
      seen_.push_back(std::move(seen));
    }
    http::response<http::string_body> response{static_cast<http::status>(answer.status), 11};
    response.set(http::field::content_type, "application/json");
    response.keep_alive(false);
    response.body() = std::move(answer.body);
    response.prepare_payload();
    co_await http::async_write(stream, response, net::kNoThrow);
  }

  asio::ip::tcp::acceptor acceptor_;
  Script script_;
  mutable std::mutex mutex_;
  std::vector<Seen> seen_;
};

JournalEntry entry(std::string method, std::string name, std::string body = "{}") {
  JournalEntry e;
  e.method = std::move(method);
  e.target = "/api/v1/namespaces/default/configmaps/" + name;
  e.content_type = e.method == "PATCH" ? "application/merge-patch+json" : "application/json";
  e.user_agent = "kubelet/v1.26.0 (linux/amd64) kubernetes/b3b2a9c";
  e.component = "kubelet";
  e.object = journal_object_key("", "v1", "configmaps", "default", name);
  e.body = std::move(body);
  return e;
}

class JournalReplayTest : public test_support::StoreFixture {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    journal_ = std::make_unique<Journal>(journal_registry_, JournalLimits{});
  }
  void TearDown() override {
    if (replay_) replay_->stop();
    writer_->wait_tasks();
    io_->stop();
    if (thread_.joinable()) thread_.join();
    // The acceptor first (its aborted accept is queued on io_), then io_, which destroys the
    // suspended coroutines (the replay loop's frame still refers to replay_), then the replay.
    proxy_.reset();
    io_.reset();
    replay_.reset();
    journal_.reset();
    StoreFixture::TearDown();
  }

  // Journals `e` as OfflineWrites does: staged in a writer transaction, committed after it.
  void journal(JournalEntry e) {
    std::promise<void> done;
    Journal::Append append;
    writer_->run_exclusive(
        [&](WriteTxn& txn) -> Status {
          auto staged = journal_->stage_append(txn, e, e.method == "POST");
          if (!staged) return staged.error();
          append = std::move(*staged);
          return {};
        },
        [&](Status status) {
          EXPECT_TRUE(status) << status.error().message;
          journal_->commit_append(append);
          done.set_value();
        });
    done.get_future().wait();
  }

  void start(ScriptedProxy::Script script, int max_conflict_attempts = 3) {
    proxy_ = std::make_unique<ScriptedProxy>(*io_, std::move(script));
    JournalReplay::Options options;
    options.idle_poll = std::chrono::milliseconds(2);
    options.backoff_initial = std::chrono::milliseconds(2);
    options.backoff_max = std::chrono::milliseconds(8);
    options.request_timeout = std::chrono::seconds(10);
    options.max_conflict_attempts = max_conflict_attempts;
    replay_ = std::make_unique<JournalReplay>(*store_, *writer_, *journal_, options);
    replay_->start({io_->get_executor(), "127.0.0.1", proxy_->port(),
                    [this] {
                      ++online_asked_;
                      return online_.load();
                    },
                    "replay-secret"});
    thread_ = std::thread([this] { io_->run(); });
  }

  // Waits (bounded) for `condition`; the replay's periods are milliseconds.
  bool eventually(const std::function<bool()>& condition) {
    return ::yurthub::test_support::eventually(condition, std::chrono::seconds(20));
  }
  bool replayed_all() {
    return eventually([&] { return journal_->empty(); });
  }
  std::string metrics() { return journal_registry_.render(); }

  base::MetricsRegistry journal_registry_;
  std::unique_ptr<Journal> journal_;
  std::unique_ptr<asio::io_context> io_ = std::make_unique<asio::io_context>();
  std::unique_ptr<ScriptedProxy> proxy_;
  std::unique_ptr<JournalReplay> replay_;
  std::thread thread_;
  std::atomic<bool> online_{true};
  std::atomic<int> online_asked_{0};
};

std::vector<std::string> names_of(const std::vector<Seen>& seen) {
  std::vector<std::string> out;
  for (const auto& s : seen)
    out.push_back(s.method + " " + s.target.substr(s.target.rfind('/') + 1));
  return out;
}

TEST_F(JournalReplayTest, AnObjectsEntriesWaitForItsRetryWhileOtherObjectsGoAhead) {
  journal(entry("PATCH", "a", R"({"data":{"step":"1"}})"));
  journal(entry("PATCH", "b"));
  journal(entry("PATCH", "a", R"({"data":{"step":"2"}})"));
  start([](const Seen&, std::size_t n) { return n == 0 ? Answer{503, "{}"} : Answer{}; });

  ASSERT_TRUE(replayed_all());
  auto seen = proxy_->seen();
  // a's first entry failed: its second waited for the next pass, b did not wait.
  EXPECT_EQ(names_of(seen), (std::vector<std::string>{"PATCH a", "PATCH b", "PATCH a", "PATCH a"}));
  EXPECT_EQ(seen[2].body, R"({"data":{"step":"1"}})");
  EXPECT_EQ(seen[3].body, R"({"data":{"step":"2"}})");
  EXPECT_NE(metrics().find(R"(node_yurthub_journal_replay_retries_total{cause="5xx"} 1)"),
            std::string::npos)
      << metrics();
  EXPECT_NE(metrics().find(R"(node_yurthub_journal_removed_total{outcome="replayed"} 3)"),
            std::string::npos)
      << metrics();
}

TEST_F(JournalReplayTest, EachEntryCarriesItsClientsHeadersAndTheReplayToken) {
  JournalEntry e = entry("PATCH", "a");
  e.authorization = "Bearer pod-token";
  e.target += "?fieldManager=kubectl";
  journal(e);
  start([](const Seen&, std::size_t) { return Answer{}; });

  ASSERT_TRUE(replayed_all());
  auto seen = proxy_->seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].target, e.target);
  EXPECT_EQ(seen[0].user_agent, e.user_agent);
  EXPECT_EQ(seen[0].authorization, "Bearer pod-token");
  EXPECT_EQ(seen[0].replay_token, "replay-secret");
}

TEST_F(JournalReplayTest, EntriesTheCloudRefusesForGoodAreDroppedAndCountedByReason) {
  journal(entry("PATCH", "forbidden"));
  journal(entry("PATCH", "invalid"));
  journal(entry("POST", "exists"));
  start([](const Seen& s, std::size_t) {
    if (s.target.ends_with("forbidden")) return Answer{403, R"({"kind":"Status"})"};
    if (s.target.ends_with("invalid")) return Answer{422, R"({"kind":"Status"})"};
    return Answer{409, R"({"kind":"Status"})"};  // an event that already exists
  });

  ASSERT_TRUE(replayed_all());
  EXPECT_EQ(proxy_->count(), 3u);  // none retried
  const std::string m = metrics();
  EXPECT_NE(m.find(R"(node_yurthub_journal_removed_total{outcome="forbidden"} 1)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(R"(node_yurthub_journal_removed_total{outcome="rejected"} 1)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(R"(node_yurthub_journal_removed_total{outcome="replayed"} 1)"),
            std::string::npos)
      << m;
}

TEST_F(JournalReplayTest, A401ThatPersistsIsRetriedThenDropped) {
  journal(entry("PATCH", "a"));
  start([](const Seen&, std::size_t) { return Answer{401, R"({"kind":"Status"})"}; }, 3);

  ASSERT_TRUE(replayed_all());
  EXPECT_EQ(proxy_->count(), 3u);  // max_conflict_attempts
  EXPECT_NE(metrics().find(R"(node_yurthub_journal_removed_total{outcome="unauthorized"} 1)"),
            std::string::npos)
      << metrics();
}

TEST_F(JournalReplayTest, AStaleUpdateIsReBasedOntoTheCloudsObject) {
  JournalEntry e =
      entry("PUT", "a", R"({"metadata":{"name":"a","resourceVersion":"5"},"data":{"x":"edge"}})");
  e.base = R"({"metadata":{"name":"a","resourceVersion":"5"},"data":{"x":"old"}})";
  journal(e);
  start([](const Seen& s, std::size_t n) {
    if (s.method == "GET")
      return Answer{
          200, R"({"metadata":{"name":"a","resourceVersion":"9"},"data":{"x":"old","y":"cloud"}})"};
    return n == 0 ? Answer{409, R"({"kind":"Status"})"} : Answer{};
  });

  ASSERT_TRUE(replayed_all());
  auto seen = proxy_->seen();
  ASSERT_EQ(names_of(seen), (std::vector<std::string>{"PUT a", "GET a", "PUT a"}));
  rapidjson::Document put;
  put.Parse(seen[2].body.c_str());
  ASSERT_TRUE(put.IsObject()) << seen[2].body;
  EXPECT_STREQ(put["metadata"]["resourceVersion"].GetString(), "9");
  EXPECT_STREQ(put["data"]["x"].GetString(), "edge");
  EXPECT_STREQ(put["data"]["y"].GetString(), "cloud");
  EXPECT_NE(metrics().find("node_yurthub_journal_conflicts_merged_total 1"), std::string::npos)
      << metrics();
}

TEST_F(JournalReplayTest, NothingIsSentWhileNoServerIsHealthy) {
  journal(entry("PATCH", "a"));
  online_ = false;
  start([](const Seen&, std::size_t) { return Answer{}; });

  // The loop looked a few times, and sent nothing.
  ASSERT_TRUE(eventually([&] { return online_asked_ >= 5; }));
  EXPECT_EQ(proxy_->count(), 0u);
  EXPECT_FALSE(journal_->empty());

  online_ = true;
  ASSERT_TRUE(replayed_all());
  EXPECT_EQ(proxy_->count(), 1u);
}

TEST_F(JournalReplayTest, AnEntryThatCannotBeReadIsDropped) {
  std::promise<void> written;
  writer_->run_exclusive([](WriteTxn& txn) { return txn.put_journal(7, "not an entry"); },
                         [&](Status) { written.set_value(); });
  written.get_future().wait();
  journal_->load(*store_->read());
  ASSERT_FALSE(journal_->empty());
  start([](const Seen&, std::size_t) { return Answer{}; });

  ASSERT_TRUE(replayed_all());
  EXPECT_EQ(proxy_->count(), 0u);
  EXPECT_NE(metrics().find(R"(node_yurthub_journal_removed_total{outcome="undecodable"} 1)"),
            std::string::npos)
      << metrics();
}

}  // namespace
}  // namespace yurthub::cache
