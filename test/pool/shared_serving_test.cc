// Lists and watches answered from a WatchCache: selectors, paging, resume, expiry.
#include "pool/shared_serving.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "test/cache/cache_test_support.h"

namespace yurthub::pool {
namespace {

using cache::test_support::RecordingWriter;
using cache::test_support::run;

std::string service(const std::string& name, int rv, const std::string& app) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"default","resourceVersion":")" +
         std::to_string(rv) + R"(","labels":{"app":")" + app +
         R"("}},"spec":{"type":"ClusterIP"}})";
}

std::string event(const std::string& type, const std::string& object) {
  std::string typed = object;
  typed.insert(1, R"("kind":"Service","apiVersion":"v1",)");
  return R"({"type":")" + type + R"(","object":)" + typed + "}";
}

class SharedServing : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string rv;
    ASSERT_TRUE(cache_.listed(R"({"kind":"ServiceList","apiVersion":"v1","metadata":)"
                              R"({"resourceVersion":"10"},"items":[)" +
                                  service("a", 5, "web") + "," + service("b", 6, "db") + "," +
                                  service("c", 7, "web") + "]}",
                              &rv));
  }
  void apply(const std::string& raw) {
    std::string rv, reason;
    ASSERT_EQ(cache_.event(raw, &rv, &reason), net::EventVerdict::Ok) << reason;
    cache_.events_done();
  }
  kube::RequestInfo request(const std::string& target) {
    return kube::classify_request("GET", target, "kube-proxy/v1.26");
  }
  std::vector<std::string> names(const std::string& body) {
    rapidjson::Document doc;
    doc.Parse(body.c_str());
    std::vector<std::string> out;
    if (doc.HasParseError() || !doc.HasMember("items")) return out;
    for (const auto& item : doc["items"].GetArray())
      out.push_back(item["metadata"]["name"].GetString());
    return out;
  }
  // "TYPE name" per event line.
  std::vector<std::string> events(const std::string& body) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < body.size()) {
      const auto nl = body.find('\n', at);
      rapidjson::Document e;
      e.Parse(body.substr(at, nl - at).c_str());
      at = nl == std::string::npos ? body.size() : nl + 1;
      if (e.HasParseError()) continue;
      const auto& o = e["object"];
      std::string name = o.HasMember("metadata") && o["metadata"].HasMember("name")
                             ? o["metadata"]["name"].GetString()
                             : std::to_string(o.HasMember("code") ? o["code"].GetInt() : 0);
      out.push_back(std::string(e["type"].GetString()) + " " + name);
    }
    return out;
  }

  WatchCache cache_{{}};
  PagedSnapshots pages_;
  ServingOptions options_;
};

TEST_F(SharedServing, ListsSelectAndPageAsTheApiserver) {
  RecordingWriter all;
  EXPECT_EQ(run(serve_list(cache_, pages_, request("/api/v1/services"), options_, all)), 200u);
  EXPECT_EQ(names(all.body), (std::vector<std::string>{"a", "b", "c"}));
  RecordingWriter web;
  run(serve_list(cache_, pages_, request("/api/v1/services?labelSelector=app%3Dweb"), options_,
                 web));
  EXPECT_EQ(names(web.body), (std::vector<std::string>{"a", "c"}));
  RecordingWriter bad;
  EXPECT_EQ(run(serve_list(cache_, pages_, request("/api/v1/services?fieldSelector=spec.x%3D1"),
                           options_, bad)),
            400u);

  RecordingWriter first;
  run(serve_list(cache_, pages_, request("/api/v1/services?limit=2"), options_, first));
  EXPECT_EQ(names(first.body), (std::vector<std::string>{"a", "b"}));
  rapidjson::Document doc;
  doc.Parse(first.body.c_str());
  const std::string token = doc["metadata"]["continue"].GetString();
  apply(event("ADDED", service("aa", 11, "web")));  // the next page is of the same snapshot
  RecordingWriter second;
  run(serve_list(cache_, pages_, request("/api/v1/services?limit=2&continue=" + token), options_,
                 second));
  EXPECT_EQ(names(second.body), (std::vector<std::string>{"c"}));
  RecordingWriter stale;
  const std::string unknown = encode_pool_continue(3, "default/a");
  EXPECT_EQ(run(serve_list(cache_, pages_, request("/api/v1/services?limit=2&continue=" + unknown),
                           options_, stale)),
            410u);
}

TEST_F(SharedServing, AWatchWithASelectorSeesObjectsComeAndGo) {
  RecordingWriter out;
  int calls = 0;
  out.on_wait = [&](int) -> std::optional<hub::StreamEnd> {
    if (++calls == 1) {
      apply(event("MODIFIED", service("a", 11, "db")));   // leaves app=web
      apply(event("MODIFIED", service("b", 12, "web")));  // joins
      apply(event("MODIFIED", service("c", 13, "web")));  // stays
      return std::nullopt;
    }
    return hub::StreamEnd::ClientGone;
  };
  run(serve_watch(cache_,
                  request("/api/v1/services?watch=1&resourceVersion=10&labelSelector=app%3Dweb"),
                  options_, out));
  EXPECT_EQ(events(out.body), (std::vector<std::string>{"DELETED a", "ADDED b", "MODIFIED c"}));
  // Watch events carry kind and apiVersion.
  EXPECT_NE(out.body.find(R"("object":{"kind":"Service","apiVersion":"v1",)"), std::string::npos);
}

TEST_F(SharedServing, AWatchWithoutAVersionStartsWithTheObjectsAndATooOldOneGets410) {
  RecordingWriter fresh;
  run(serve_watch(cache_, request("/api/v1/namespaces/default/services?watch=1"), options_, fresh));
  EXPECT_EQ(events(fresh.body), (std::vector<std::string>{"ADDED a", "ADDED b", "ADDED c"}));

  WatchCache::Options small;
  small.window_events = 1;
  WatchCache cache(small);
  std::string rv, reason;
  ASSERT_TRUE(cache.listed(R"({"kind":"ServiceList","apiVersion":"v1","metadata":)"
                           R"({"resourceVersion":"10"},"items":[]})",
                           &rv));
  cache.event(event("ADDED", service("x", 11, "web")), &rv, &reason);
  cache.event(event("ADDED", service("y", 12, "web")), &rv, &reason);
  cache.events_done();
  RecordingWriter old;
  run(serve_watch(cache, request("/api/v1/services?watch=1&resourceVersion=10"), options_, old));
  EXPECT_EQ(old.status, 200u);
  EXPECT_EQ(events(old.body), (std::vector<std::string>{"ERROR 410"}));
}

}  // namespace
}  // namespace yurthub::pool
