// The fake's streaming-list options against the apimachinery rules it models (watch_options.h):
// a WatchList apiserver and v1.26.
#include "test/fake_apiserver/watch_options.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace yurthub::fake {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(YURTHUB_TESTDATA_DIR) + "/fixtures/apiserver-v1.26/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

std::variant<WatchOptions, Reply> decide(const char* query, bool watch_list) {
  return decide_watch_options(Query::parse(query), watch_list);
}

TEST(FakeWatchOptions, AWatchListServerTakesTheReflectorsStreamingList) {
  auto decided = decide(
      "allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&"
      "watch=true",
      true);
  ASSERT_TRUE(std::holds_alternative<WatchOptions>(decided));
  EXPECT_EQ(std::get<WatchOptions>(decided).send_initial_events, true);
  // Defaulted: a watch from now lists first; a watch from N does not.
  EXPECT_EQ(std::get<WatchOptions>(decide("watch=true", true)).send_initial_events, true);
  EXPECT_EQ(
      std::get<WatchOptions>(decide("watch=true&resourceVersion=7", true)).send_initial_events,
      std::nullopt);
  EXPECT_EQ(std::get<WatchOptions>(decide("watch=true&sendInitialEvents=false&"
                                          "resourceVersionMatch=NotOlderThan",
                                          true))
                .send_initial_events,
            false);
}

TEST(FakeWatchOptions, AWatchListServerRefusesWhatApimachineryRefuses) {
  auto refused = decide("watch=true&sendInitialEvents=true", true);
  ASSERT_TRUE(std::holds_alternative<Reply>(refused));
  EXPECT_EQ(std::get<Reply>(refused).status, 422u);
  EXPECT_NE(std::get<Reply>(refused).body.find(
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
            std::string::npos);
  auto bare_match = decide("watch=true&resourceVersion=5&resourceVersionMatch=NotOlderThan", true);
  ASSERT_TRUE(std::holds_alternative<Reply>(bare_match));
  EXPECT_NE(std::get<Reply>(bare_match).body.find("unless sendInitialEvents is provided"),
            std::string::npos);
}

// The bodies a real kube-apiserver v1.26.1 answered (test/testdata/fixtures/apiserver-v1.26,
// watch-list-422-*), byte for byte.
TEST(FakeWatchOptions, V126RefusesEveryResourceVersionMatchOnAWatchAsTheRealOneDoes) {
  const auto body_of = [](const char* query) {
    auto refused = decide(query, false);
    EXPECT_TRUE(std::holds_alternative<Reply>(refused)) << query;
    if (!std::holds_alternative<Reply>(refused)) return std::string();
    EXPECT_EQ(std::get<Reply>(refused).status, 422u);
    return std::get<Reply>(refused).body;
  };
  EXPECT_EQ(body_of("allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&"
                    "sendInitialEvents=true&timeoutSeconds=5&watch=true"),
            fixture("watch-list-422-no-rv.body"));
  EXPECT_EQ(body_of("allowWatchBookmarks=true&resourceVersion=1&resourceVersionMatch=NotOlderThan&"
                    "sendInitialEvents=true&timeoutSeconds=5&watch=true"),
            fixture("watch-list-422-rv.body"));
  // sendInitialEvents alone is unknown to v1.26: a plain watch.
  EXPECT_EQ(std::get<WatchOptions>(decide("watch=true&sendInitialEvents=true", false))
                .send_initial_events,
            std::nullopt);
}

}  // namespace
}  // namespace yurthub::fake
