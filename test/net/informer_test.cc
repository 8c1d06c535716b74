// Informer against a scripted fake apiserver (test/net/scripted_apiserver.h) on the test's own
// io_context: the test thread runs the context while it waits for a condition, so the informer,
// the server and the assertions never race.
#include "net/informer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/url.h"
#include "net/reflector.h"
#include "test/base/poll.h"
#include "test/net/scripted_apiserver.h"

namespace yurthub::net {
namespace {

using namespace std::chrono_literals;
using namespace test_support;  // NOLINT(google-build-using-namespace)

std::string configmap(const std::string& name, const std::string& rv, const std::string& value) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"kube-system","resourceVersion":")" +
         rv + R"("},"data":{"k":")" + value + R"("}})";
}

std::string list_body(const std::string& rv, const std::vector<std::string>& items) {
  std::string body =
      R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
      R"("},"items":[)";
  for (std::size_t i = 0; i < items.size(); ++i) body += (i ? "," : "") + items[i];
  return body + "]}";
}

std::string event(const std::string& type, const std::string& object) {
  std::string typed = object;
  if (type != "ERROR") typed.insert(1, R"("kind":"ConfigMap","apiVersion":"v1",)");
  return R"({"type":")" + type + R"(","object":)" + typed + "}";
}

std::string bookmark(const std::string& rv) {
  return event("BOOKMARK", R"({"metadata":{"resourceVersion":")" + rv + R"("}})");
}

std::string gone() {
  return event("ERROR", R"({"kind":"Status","status":"Failure","reason":"Expired","code":410,)"
                        R"j("message":"too old resource version: 5 (40)"})j");
}

std::string data_of(const ObjectSnapshot& snap, const std::string& key) {
  auto it = snap->find(key);
  if (it == snap->end()) return "<absent>";
  return (*it->second)["data"]["k"].GetString();
}

class InformerTest : public ::testing::Test {
 protected:
  InformerOptions options() {
    InformerOptions o;
    o.name = "test-cfg";
    o.path = "/api/v1/namespaces/kube-system/configmaps";
    o.proxy_port = server_.port();
    o.user_agent = "yurthub/test";
    o.watch_timeout_min = 300s;
    o.backoff_initial = 20ms;
    o.backoff_max = 80ms;
    return o;
  }

  void start(InformerOptions o) {
    informer_ =
        std::make_unique<Informer>(ioc_.get_executor(), std::move(o), [this](ObjectSnapshot snap) {
          ++changes_;
          last_ = std::move(snap);
          if (on_change_hook_) on_change_hook_();
        });
    informer_->start();
  }
  void start() { start(options()); }

  // Runs the io_context until `done()` or 10 s have passed.
  bool wait_until(const std::function<bool()>& done) {
    return ::yurthub::test_support::run_until(ioc_, done);
  }
  bool wait_size(std::size_t n) {
    return wait_until([&] { return informer_->snapshot()->size() == n; });
  }
  bool wait_watches(std::size_t n) {
    return wait_until([&] { return server_.watches().size() >= n; });
  }

  asio::io_context ioc_;  // first: destroyed last, with every coroutine frame still pending
  ScriptedApiserver server_{ioc_};
  std::unique_ptr<Informer> informer_;
  int changes_ = 0;
  ObjectSnapshot last_;
  std::function<void()> on_change_hook_;
};

TEST_F(InformerTest, ListsThenFollowsWatchEvents) {
  server_.on_list(
      http_reply(200, list_body("10", {configmap("a", "8", "a1"), configmap("b", "9", "b1")})));
  start();
  ASSERT_TRUE(wait_size(2));
  EXPECT_TRUE(informer_->synced());
  auto snap = informer_->snapshot();
  EXPECT_EQ(data_of(snap, "kube-system/a"), "a1");
  EXPECT_EQ(data_of(snap, "kube-system/b"), "b1");
  // List items get the kind and apiVersion that watch events carry.
  EXPECT_STREQ((*snap->at("kube-system/a"))["kind"].GetString(), "ConfigMap");
  EXPECT_EQ(last_, snap);

  ASSERT_TRUE(wait_watches(1));
  const Request w = server_.watches()[0];
  EXPECT_EQ(w.path, "/api/v1/namespaces/kube-system/configmaps");
  EXPECT_EQ(w.query.at("resourceVersion"), "10");
  EXPECT_EQ(w.query.at("watch"), "true");
  EXPECT_EQ(w.query.at("allowWatchBookmarks"), "true");
  const int timeout = std::stoi(w.query.at("timeoutSeconds"));
  EXPECT_GE(timeout, 300);
  EXPECT_LT(timeout, 600);
  EXPECT_EQ(server_.lists()[0].query.count("resourceVersion"), 0u);  // a consistent list

  ASSERT_TRUE(wait_until([&] { return !server_.streams.empty(); }));
  auto& stream = *server_.streams[0];
  stream.push(event("ADDED", configmap("c", "11", "c1")));
  ASSERT_TRUE(wait_size(3));
  const auto c_doc = informer_->snapshot()->at("kube-system/c");
  stream.push(event("MODIFIED", configmap("a", "12", "a2")));
  ASSERT_TRUE(wait_until([&] { return data_of(informer_->snapshot(), "kube-system/a") == "a2"; }));
  // Copy-on-write: the unchanged object is shared, the old snapshot is untouched.
  EXPECT_EQ(informer_->snapshot()->at("kube-system/c"), c_doc);
  EXPECT_EQ(data_of(snap, "kube-system/a"), "a1");
  stream.push(event("DELETED", configmap("b", "13", "b1")));
  ASSERT_TRUE(wait_size(2));
  EXPECT_EQ(informer_->snapshot()->count("kube-system/b"), 0u);
  EXPECT_EQ(last_, informer_->snapshot());
  EXPECT_EQ(changes_, 4);  // list, ADDED, MODIFIED, DELETED
}

TEST_F(InformerTest, BookmarkAdvancesVersionAndCleanEndRewatches) {
  server_.on_list(http_reply(200, list_body("5", {configmap("a", "5", "a1")})));
  server_.on_watch(stream_reply({event("ADDED", configmap("b", "7", "b1")), bookmark("20")}, true));
  start();
  ASSERT_TRUE(wait_watches(2));
  const auto watches = server_.watches();
  EXPECT_EQ(watches[0].query.at("resourceVersion"), "5");
  EXPECT_EQ(watches[1].query.at("resourceVersion"), "20");
  EXPECT_EQ(server_.lists().size(), 1u);  // a clean end re-watches, it does not re-list
  EXPECT_EQ(informer_->snapshot()->size(), 2u);
  EXPECT_EQ(changes_, 2);  // the bookmark changed no object
}

TEST_F(InformerTest, ExpiredErrorEventRelists) {
  server_.on_list(
      http_reply(200, list_body("5", {configmap("a", "5", "a1"), configmap("b", "5", "b1")})));
  server_.on_watch(stream_reply({event("ADDED", configmap("c", "6", "c1")), gone()}, false));
  server_.on_list(http_reply(200, list_body("40", {configmap("a", "5", "a1")})));
  start();
  ASSERT_TRUE(wait_watches(2));
  EXPECT_EQ(server_.lists().size(), 2u);
  EXPECT_EQ(server_.watches()[1].query.at("resourceVersion"), "40");
  const auto snap = informer_->snapshot();
  ASSERT_EQ(snap->size(), 1u);
  EXPECT_EQ(snap->count("kube-system/a"), 1u);
}

TEST_F(InformerTest, HttpGoneOnWatchRelists) {
  server_.on_list(http_reply(200, list_body("5", {configmap("a", "5", "a1")})));
  server_.on_watch(http_reply(410, R"({"kind":"Status","code":410})"));
  server_.on_list(http_reply(200, list_body("41", {configmap("a", "5", "a1")})));
  start();
  ASSERT_TRUE(wait_watches(2));
  EXPECT_EQ(server_.lists().size(), 2u);
  EXPECT_EQ(server_.watches()[1].query.at("resourceVersion"), "41");
  EXPECT_EQ(changes_, 1);  // the re-list found nothing new: nothing published
}

TEST_F(InformerTest, ListFailuresBackOffAndNotSyncedUntilAListSucceeds) {
  server_.on_list(http_reply(503, R"({"kind":"Status","message":"down"})"));
  server_.on_list(http_reply(503, R"({"kind":"Status","message":"down"})"));
  start();
  ASSERT_TRUE(wait_until([&] { return server_.lists().size() >= 2; }));
  EXPECT_FALSE(informer_->synced());
  EXPECT_TRUE(informer_->snapshot()->empty());
  EXPECT_EQ(changes_, 0);
  server_.on_list(http_reply(200, list_body("7", {configmap("a", "7", "a1")})));
  ASSERT_TRUE(wait_size(1));
  EXPECT_TRUE(informer_->synced());
  const auto lists = server_.lists();
  ASSERT_EQ(lists.size(), 3u);
  // 20 ms, then doubled; lower bounds only, so a slow machine cannot fail this.
  EXPECT_GE(lists[1].at - lists[0].at, 20ms);
  EXPECT_GE(lists[2].at - lists[1].at, 40ms);
}

TEST_F(InformerTest, MalformedWatchStreamBacksOffAndRelists) {
  server_.on_list(http_reply(200, list_body("5", {configmap("a", "5", "a1")})));
  server_.on_watch(stream_reply({"{\"type\":\"ADDED\",\"object\":}"}, false));
  server_.on_list(http_reply(200, list_body("6", {configmap("a", "6", "a2")})));
  start();
  ASSERT_TRUE(wait_until([&] { return data_of(informer_->snapshot(), "kube-system/a") == "a2"; }));
  EXPECT_EQ(server_.lists().size(), 2u);
}

TEST_F(InformerTest, SelectorsAreEncodedAndUserAgentSent) {
  auto o = options();
  o.label_selector = "app in (a,b),tier!=web";
  o.field_selector = "metadata.name=yurt-hub-cfg";
  server_.on_list(http_reply(200, list_body("5", {})));
  start(o);
  ASSERT_TRUE(wait_watches(1));
  EXPECT_TRUE(informer_->synced());
  EXPECT_EQ(changes_, 1);  // the first list is published even when empty
  for (const Request& r : server_.requests) {
    EXPECT_NE(r.target.find("labelSelector=app%20in%20%28a%2Cb%29%2Ctier%21%3Dweb"),
              std::string::npos)
        << r.target;
    EXPECT_NE(r.target.find("fieldSelector=metadata.name%3Dyurt-hub-cfg"), std::string::npos)
        << r.target;
    EXPECT_EQ(r.query.at("labelSelector"), o.label_selector);
    EXPECT_EQ(r.user_agent, "yurthub/test");
    EXPECT_EQ(r.accept, "application/json");
  }
}

TEST_F(InformerTest, StopDuringHangingWatchIsPrompt) {
  server_.on_list(http_reply(200, list_body("5", {configmap("a", "5", "a1")})));
  start();
  ASSERT_TRUE(wait_until([&] { return !server_.streams.empty(); }));
  EXPECT_FALSE(informer_->stopped());
  const auto begun = Clock::now();
  informer_->stop();
  ASSERT_TRUE(wait_until([&] { return informer_->stopped(); }));
  EXPECT_LT(Clock::now() - begun, 2s);
  ASSERT_TRUE(wait_until([&] { return server_.streams[0]->client_closed; }));
  // Nothing is applied or published after stop().
  server_.streams[0]->push(event("ADDED", configmap("b", "6", "b1")));
  ioc_.run_for(50ms);
  EXPECT_EQ(informer_->snapshot()->size(), 1u);
  EXPECT_EQ(changes_, 1);
  informer_.reset();
}

TEST_F(InformerTest, StopFromTheCallbackEndsTheLoop) {
  server_.on_list(http_reply(200, list_body("5", {configmap("a", "5", "a1")})));
  on_change_hook_ = [this] { informer_->stop(); };
  start();
  ASSERT_TRUE(wait_until([&] { return informer_->stopped(); }));
  EXPECT_EQ(changes_, 1);
  EXPECT_TRUE(server_.watches().empty());
}

TEST_F(InformerTest, StopDuringBackoffIsPrompt) {
  auto o = options();
  o.backoff_initial = 60s;  // a stop that waited for the timer would time the test out
  start(o);
  ASSERT_TRUE(wait_until([&] { return server_.lists().size() == 1; }));
  ioc_.run_for(20ms);
  informer_->stop();
  ASSERT_TRUE(wait_until([&] { return informer_->stopped(); }));
  EXPECT_FALSE(informer_->synced());
}

TEST_F(InformerTest, DestroyedWhileWatchingNeverCallsBack) {
  server_.on_list(http_reply(200, list_body("5", {configmap("a", "5", "a1")})));
  start();
  ASSERT_TRUE(wait_until([&] { return !server_.streams.empty(); }));
  informer_.reset();  // no stop() first: the loop owns its state and exits on its own
  ASSERT_TRUE(wait_until([&] { return server_.streams[0]->client_closed; }));
  server_.streams[0]->push(event("ADDED", configmap("b", "6", "b1")));
  server_.streams[0]->finish();
  ioc_.run_for(50ms);
  EXPECT_EQ(changes_, 1);
  EXPECT_EQ(server_.requests.size(), 2u);  // no re-watch after the stream ended
}

// The Reflector under the informer: its source asked before each request, and reconnect() to a
// new one (a follower's leader changed) resumes the watch there, from its last version, at once.
class RecordingSink final : public ReflectorSink {
 public:
  Status listed(std::string_view, std::string* resource_version) override {
    ++lists;
    *resource_version = "10";
    return Status{};
  }
  EventVerdict event(std::string_view raw, std::string* resource_version, std::string*) override {
    ++events;
    if (raw.find(R"("resourceVersion":"11")") != std::string_view::npos) *resource_version = "11";
    return EventVerdict::Ok;
  }
  int lists = 0;
  int events = 0;
};

TEST_F(InformerTest, AReconnectResumesTheWatchAtTheNewSourceFromItsVersion) {
  ScriptedApiserver other{ioc_};
  server_.on_list(http_reply(200, list_body("10", {})));
  server_.on_watch(stream_reply({}, false));
  other.on_watch(stream_reply({}, false));
  bool use_other = false;
  ReflectorOptions o = options();
  o.backoff_initial = 5s;  // a reconnect never waits for a backoff
  o.backoff_max = 5s;
  o.source = [&] {
    return SourceAddress{"127.0.0.1", use_other ? other.port() : server_.port(), nullptr};
  };
  auto sink = std::make_shared<RecordingSink>();
  Reflector reflector(ioc_.get_executor(), o, sink);
  reflector.start();
  ASSERT_TRUE(wait_until([&] { return !server_.streams.empty(); }));
  server_.streams[0]->push(event("ADDED", configmap("a", "11", "a1")));
  ASSERT_TRUE(wait_until([&] { return sink->events == 1; }));

  use_other = true;
  reflector.reconnect();
  const auto asked = Clock::now();
  ASSERT_TRUE(wait_until([&] { return other.watches().size() == 1; }));
  EXPECT_LT(Clock::now() - asked, 2s);
  EXPECT_EQ(other.watches()[0].query.at("resourceVersion"), "11");
  EXPECT_TRUE(other.lists().empty());  // resumed, not listed again
  EXPECT_EQ(sink->lists, 1);
  reflector.stop();
  ASSERT_TRUE(wait_until([&] { return reflector.stopped(); }));
}

TEST(InformerUrl, PercentEncodesAllButUnreserved) {
  std::string target = "/api/v1/pods";
  base::append_query_param(target, "labelSelector", "app=x");
  base::append_query_param(target, "watch", "true");
  EXPECT_EQ(target, "/api/v1/pods?labelSelector=app%3Dx&watch=true");
  target = "/api/v1/pods";
  base::append_query_param(target, "l", "aZ09-._~ b/c=d&e,f!(g)+;\xc3\xa9%");
  EXPECT_EQ(target, "/api/v1/pods?l=aZ09-._~%20b%2Fc%3Dd%26e%2Cf%21%28g%29%2B%3B%C3%A9%25");
  // Read back as the apiserver's url.ParseQuery reads it.
  std::string read_back;
  kube::for_each_query_param(std::string_view(target).substr(target.find('?') + 1),
                             [&](std::string_view, std::string_view v) { read_back = v; });
  EXPECT_EQ(read_back, "aZ09-._~ b/c=d&e,f!(g)+;\xc3\xa9%");
}

}  // namespace
}  // namespace yurthub::net
