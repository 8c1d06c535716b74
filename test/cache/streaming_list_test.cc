// Streaming lists (client-go v1.35's WatchList) through the cache without the network: the
// initial events of a relayed streaming list up to the end bookmark become the list they stand
// for (as a list response would), the events after it update that set, and offline the same
// streaming list is answered from it (ADDED events, the end bookmark, the held watch).
#include "test/cache/offline_fixture.h"

namespace yurthub::cache {
namespace {

using namespace offline_testing;

const char* const kStreamingList =
    "/api/v1/pods?allowWatchBookmarks=true&fieldSelector=spec.nodeName%3Dedge-node-1&"
    "resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeoutSeconds=400&watch=true";
const char* const kPlainList = "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1";

std::string pod(const std::string& name, int rv, const std::string& extra = "") {
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
         R"(","namespace":"default","resourceVersion":")" + std::to_string(rv) +
         R"("},"spec":{"nodeName":"edge-node-1")" + extra + "}}";
}
std::string event(const char* type, const std::string& object) {
  return std::string(R"({"type":")") + type + R"(","object":)" + object + "}\n";
}
std::string end_bookmark(int rv) {
  return event("BOOKMARK", R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":")" +
                               std::to_string(rv) +
                               R"(","annotations":{"k8s.io/initial-events-end":"true"}}})");
}

std::vector<std::string> item_names(const std::string& list) {
  std::vector<std::string> names;
  auto doc = parse_json(list);
  if (!doc.IsObject() || !doc.HasMember("items")) return names;
  for (const auto& item : doc["items"].GetArray())
    names.push_back(item["metadata"]["name"].GetString());
  return names;
}

using StreamingListTest = OfflineTest;

TEST_F(StreamingListTest, TheInitialEventsAreTheListTheyStandFor) {
  // Live events may precede the end bookmark (the watch cache sends it after its snapshot): the
  // reflector's temporary store takes them, and so does the list.
  cache(kStreamingList,
        event("ADDED", pod("a", 10)) + event("ADDED", pod("b", 11)) + event("ADDED", pod("c", 12)) +
            event("MODIFIED", pod("b", 20, R"(,"x":1)")) + event("DELETED", pod("c", 21)) +
            end_bookmark(21) + event("ADDED", pod("d", 30)));
  auto listed = serve(kPlainList);
  ASSERT_EQ(listed.status, 200u) << listed.body;
  EXPECT_EQ(item_names(listed.body), (std::vector<std::string>{"a", "b", "d"}));
  EXPECT_THAT(listed.body, HasSubstr(R"("x":1)"));
  EXPECT_EQ(parse_json(listed.body)["metadata"]["resourceVersion"], "30");
  EXPECT_STREQ(parse_json(listed.body)["kind"].GetString(), "PodList");
}

TEST_F(StreamingListTest, AnEmptyStreamingListIsAnEmptyList) {
  cache(kStreamingList, end_bookmark(40));
  auto listed = serve(kPlainList);
  ASSERT_EQ(listed.status, 200u) << listed.body;
  EXPECT_TRUE(item_names(listed.body).empty());
  EXPECT_EQ(parse_json(listed.body)["metadata"]["resourceVersion"], "40");
}

TEST_F(StreamingListTest, AStreamCutBeforeItsBookmarkLeavesTheSetAsItWas) {
  cache(kStreamingList, event("ADDED", pod("a", 10)) + event("ADDED", pod("b", 11)));
  EXPECT_EQ(serve(kPlainList).status, 404u);  // never a partial list

  cache(kPlainList, pod_list({"old"}, 5));
  cache(kStreamingList, event("ADDED", pod("a", 10)));
  EXPECT_EQ(item_names(serve(kPlainList).body), (std::vector<std::string>{"old"}));
}

TEST_F(StreamingListTest, OverACompleteSetItReplacesItAndDropsWhatItDeleted) {
  cache(kPlainList, pod_list({"a", "b", "c"}, 5));
  // b unchanged (the same bytes are not written again), c deleted before the bookmark, a gone.
  const std::string b = R"({"metadata":{"name":"b","namespace":"default","resourceVersion":"5",)"
                        R"("labels":{"app":"web"}},"spec":{"nodeName":"edge-node-1"}})";
  cache(kStreamingList, event("ADDED", b) + event("ADDED", pod("c", 8)) +
                            event("DELETED", pod("c", 9)) + event("ADDED", pod("e", 9)) +
                            end_bookmark(9));
  EXPECT_EQ(item_names(serve(kPlainList).body), (std::vector<std::string>{"b", "e"}));
}

TEST_F(StreamingListTest, OfflineItIsAnsweredFromTheCoveringList) {
  cache(kPlainList, pod_list({"a", "b"}, 50));
  auto out = serve(kStreamingList,
                   [](int) -> std::optional<hub::StreamEnd> { return hub::StreamEnd::ClientGone; });
  ASSERT_EQ(out.status, 200u) << out.body;
  std::vector<std::string> lines;
  std::istringstream in(out.body);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u) << out.body;
  for (int i = 0; i < 2; ++i) {
    auto e = parse_json(lines[i]);
    EXPECT_STREQ(e["type"].GetString(), "ADDED");
    EXPECT_STREQ(e["object"]["kind"].GetString(), "Pod");  // watch events carry their kind
    EXPECT_STREQ(e["object"]["metadata"]["name"].GetString(), i == 0 ? "a" : "b");
  }
  EXPECT_EQ(lines[2] + "\n", end_bookmark(50));
  // Narrower selectors are applied to the covering list's objects; the bookmark still ends them.
  auto narrow = serve(
      "/api/v1/namespaces/default/pods?allowWatchBookmarks=true&"
      "fieldSelector=spec.nodeName%3Dedge-node-1,metadata.name%3Db&"
      "resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true",
      [](int) -> std::optional<hub::StreamEnd> { return hub::StreamEnd::ClientGone; });
  EXPECT_EQ(std::count(narrow.body.begin(), narrow.body.end(), '\n'), 2) << narrow.body;
  EXPECT_THAT(narrow.body, HasSubstr(R"("name":"b")"));
  EXPECT_THAT(narrow.body, HasSubstr("k8s.io/initial-events-end"));
}

TEST_F(StreamingListTest, OfflineASetNeverListedIsTheLists404) {
  auto out = serve(kStreamingList);
  EXPECT_EQ(out.status, 404u);
  EXPECT_THAT(out.body, HasSubstr("not cached on this node for kubelet"));
}

TEST_F(StreamingListTest, OfflineOptionsTheApiserverRefusesGetIts422) {
  cache(kPlainList, pod_list({"a"}, 50));
  auto out = serve("/api/v1/pods?watch=true&sendInitialEvents=true&allowWatchBookmarks=true");
  EXPECT_EQ(out.status, 422u);
  EXPECT_THAT(out.body,
              HasSubstr("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
}

}  // namespace
}  // namespace yurthub::cache
