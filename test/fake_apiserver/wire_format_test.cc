// Unit tests for the fake apiserver's pure wire-format pieces, checked against the real
// kube-apiserver captures in test/testdata/fixtures/apiserver-v1.26: Status bodies, continue
// tokens, watch event lines, discovery documents, request path parsing, token files and the exec
// protocol helpers.
#include <fstream>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

#include "test/fake_apiserver/auth.h"
#include "test/fake_apiserver/continue_token.h"
#include "test/fake_apiserver/discovery.h"
#include "test/fake_apiserver/exec.h"
#include "test/fake_apiserver/json_util.h"
#include "test/fake_apiserver/request_path.h"
#include "test/fake_apiserver/status.h"
#include "test/fake_apiserver/watch.h"

namespace yurthub::fake {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(YURTHUB_TESTDATA_DIR) + "/fixtures/apiserver-v1.26/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

TEST(StatusTest, BodiesMatchTheApiserverByteForByte) {
  EXPECT_EQ(not_found("pods", "", "pods", "nope").body, fixture("status-404.body"));
  EXPECT_EQ(conflict("nodes", "", "nodes", "edge-node-1").body,
            fixture("status-409-conflict.body"));
  EXPECT_EQ(
      already_exists("leases.coordination.k8s.io", "coordination.k8s.io", "leases", "edge-node-1")
          .body,
      fixture("lease-create.body"));
  Reply r = not_found("pods", "", "pods", "nope");
  EXPECT_EQ(r.status, 404u);
  EXPECT_EQ(r.content_type, "application/json");
}

TEST(StatusTest, ForbiddenNamesUserVerbAndScope) {
  Reply r = forbidden("system:node:edge-node-1", "list", "", "secrets", "default", "");
  EXPECT_EQ(r.status, 403u);
  EXPECT_EQ(r.body,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
            R"("secrets is forbidden: User \"system:node:edge-node-1\" cannot list resource )"
            R"(\"secrets\" in API group \"\" in the namespace \"default\"","reason":"Forbidden",)"
            R"("details":{"kind":"secrets"},"code":403})");
}

TEST(StatusTest, ExpiredWatchStatus) {
  EXPECT_EQ(expired_status(5, 200),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"x("message":"too old resource version: 5 (200)","reason":"Expired","code":410})x");
}

std::vector<std::string> member_names(const rapidjson::Value& object) {
  std::vector<std::string> names;
  for (const auto& m : object.GetObject()) names.emplace_back(m.name.GetString());
  return names;
}

// The apiserver writes metadata in ObjectMeta's field order (the hub's cache taps read name,
// namespace and resourceVersion from an object's first bytes because of it): the fake does too.
TEST(MetadataOrderTest, MembersFollowTheApiserversOrder) {
  auto list = parse_json(fixture("pods-list-node.body"));
  ASSERT_TRUE(list);
  const rapidjson::Value& captured = (*list)["items"][0]["metadata"];
  const auto expected = member_names(captured);
  ASSERT_GE(expected.size(), 5u);
  rapidjson::Document pod(rapidjson::kObjectType);
  rapidjson::Value reversed(rapidjson::kObjectType);
  reversed.AddMember("zz-not-objectmeta", 1, pod.GetAllocator());
  for (auto name = expected.rbegin(); name != expected.rend(); ++name) {
    rapidjson::Value copy(captured[name->c_str()], pod.GetAllocator());
    reversed.AddMember(rapidjson::Value(name->c_str(), pod.GetAllocator()), copy,
                       pod.GetAllocator());
  }
  pod.AddMember("metadata", reversed, pod.GetAllocator());
  order_metadata(pod);
  auto names = member_names(pod["metadata"]);
  ASSERT_EQ(names.back(), "zz-not-objectmeta");
  names.pop_back();
  EXPECT_EQ(names, expected);
}

TEST(ContinueTokenTest, EncodesLikeTheApiserver) {
  // pods-list-page1.body: {"v":"meta.k8s.io/v1","rv":229,"start":"web-0\u0000"}
  EXPECT_EQ(encode_continue({229, "web-0"}),
            "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjI5LCJzdGFydCI6IndlYi0wXHUwMDAwIn0");
  auto decoded =
      decode_continue("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjI5LCJzdGFydCI6IndlYi0wXHUwMDAwIn0");
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->rv, 229u);
  EXPECT_EQ(decoded->start, "web-0");
}

TEST(ContinueTokenTest, RejectsGarbage) {
  EXPECT_FALSE(decode_continue("!!!"));
  EXPECT_FALSE(decode_continue(base64url_encode("{}")));
  EXPECT_FALSE(decode_continue(base64url_encode(R"({"v":"other","rv":1,"start":"a"})")));
  EXPECT_FALSE(decode_continue(base64url_encode("not json")));
}

TEST(WatchFormatTest, EventAndBookmarkLines) {
  WatchItem item{EventType::Modified,
                 std::make_shared<const std::string>(R"({"metadata":{"name":"a"}})"), 7};
  EXPECT_EQ(watch_event(item, "Pod", "v1"),
            "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
            "\"metadata\":{\"name\":\"a\"}}}\n");
  EXPECT_EQ(bookmark_event("Pod", "v1", 233),
            "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
            "\"metadata\":{\"resourceVersion\":\"233\",\"creationTimestamp\":null}}}\n");
}

TEST(DiscoveryTest, CoreResourceListHasSubresourcesAndNoApiVersion) {
  auto doc = discovery_document("/api/v1", "127.0.0.1:6443");
  ASSERT_TRUE(doc);
  EXPECT_TRUE(doc->starts_with(R"({"kind":"APIResourceList","groupVersion":"v1","resources":[)"));
  for (const char* s : {R"("name":"pods/exec")", R"("name":"pods/status")",
                        R"("name":"nodes/status")", R"("shortNames":["po"])"}) {
    EXPECT_NE(doc->find(s), std::string::npos) << s;
  }
}

TEST(DiscoveryTest, GroupsAndVersions) {
  EXPECT_EQ(*discovery_document("/apis/discovery.k8s.io/v1", "x"),
            R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"discovery.k8s.io/v1",)"
            R"("resources":[{"name":"endpointslices","singularName":"","namespaced":true,)"
            R"("kind":"EndpointSlice","verbs":["create","delete","deletecollection","get",)"
            R"("list","patch","update","watch"]}]})");
  auto groups = discovery_document("/apis", "x");
  ASSERT_TRUE(groups);
  EXPECT_NE(groups->find(R"("preferredVersion":{"groupVersion":"apps.openyurt.io/v1beta2")"),
            std::string::npos);
  EXPECT_TRUE(discovery_document("/apis/apps.openyurt.io/v1beta1", "x"));
  EXPECT_FALSE(discovery_document("/apis/apps/v1", "x"));
  EXPECT_EQ(*discovery_document("/api", "127.0.0.1:6443"), fixture("api.body"));
}

TEST(RequestPathTest, ParsesResourcePaths) {
  struct Case {
    std::string path, group, version, resource, ns, name, sub;
    bool watch;
  };
  std::vector<Case> cases = {
      {"/api/v1/pods", "", "v1", "pods", "", "", "", false},
      {"/api/v1/namespaces/default/pods/web-0/status", "", "v1", "pods", "default", "web-0",
       "status", false},
      {"/api/v1/namespaces/default", "", "v1", "namespaces", "", "default", "", false},
      {"/api/v1/namespaces/kube-system/status", "", "v1", "namespaces", "", "kube-system", "status",
       false},
      {"/api/v1/namespaces", "", "v1", "namespaces", "", "", "", false},
      {"/api/v1/watch/namespaces/default/pods", "", "v1", "pods", "default", "", "", true},
      {"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1", "coordination.k8s.io",
       "v1", "leases", "kube-node-lease", "n1", "", false},
      {"/apis/apps.openyurt.io/v1beta1/nodepools/pool-a", "apps.openyurt.io", "v1beta1",
       "nodepools", "", "pool-a", "", false},
  };
  for (const auto& c : cases) {
    auto p = parse_api_path(c.path);
    ASSERT_TRUE(p) << c.path;
    EXPECT_EQ(p->group, c.group) << c.path;
    EXPECT_EQ(p->version, c.version) << c.path;
    EXPECT_EQ(p->resource, c.resource) << c.path;
    EXPECT_EQ(p->ns, c.ns) << c.path;
    EXPECT_EQ(p->name, c.name) << c.path;
    EXPECT_EQ(p->subresource, c.sub) << c.path;
    EXPECT_EQ(p->watch_prefix, c.watch) << c.path;
  }
  EXPECT_FALSE(parse_api_path("/healthz"));
  EXPECT_FALSE(parse_api_path("/api/v1/namespaces/a/pods/b/c/d"));
}

TEST(RequestPathTest, QueryDecodingAndFlags) {
  Query q = Query::parse("labelSelector=app%3Dweb%2Ctier+in+(a)&watch=1&command=echo&command=hi");
  EXPECT_EQ(q.value("labelSelector"), "app=web,tier in (a)");
  EXPECT_TRUE(q.flag("watch"));
  EXPECT_FALSE(q.flag("allowWatchBookmarks"));
  EXPECT_EQ(q.all("command"), (std::vector<std::string>{"echo", "hi"}));
  q.set("watch", "false");
  EXPECT_FALSE(q.flag("watch"));
}

TEST(AuthTest, ParsesStaticTokenCsv) {
  auto auth = TokenAuthenticator::parse(
      "# comment\n"
      "tok1,alice,uid-1,\"team-a,team-b\"\n"
      "tok2,bob,uid-2\n");
  ASSERT_TRUE(auth) << auth.error().message;
  const Identity* alice = auth->find("tok1");
  ASSERT_NE(alice, nullptr);
  EXPECT_EQ(alice->user, "alice");
  EXPECT_EQ(alice->uid, "uid-1");
  EXPECT_EQ(alice->groups, (std::vector<std::string>{"team-a", "team-b"}));
  EXPECT_TRUE(auth->find("tok2")->groups.empty());
  EXPECT_EQ(auth->find("tok3"), nullptr);
  EXPECT_FALSE(TokenAuthenticator::parse("just-a-token\n"));
  EXPECT_EQ(bearer_token("Bearer abc"), "abc");
  EXPECT_EQ(bearer_token("bearer abc "), "abc");
  EXPECT_EQ(bearer_token("Basic abc"), "");
}

TEST(ExecTest, ProtocolChoiceAndStatus) {
  EXPECT_EQ(choose_exec_protocol("v4.channel.k8s.io, v5.channel.k8s.io"), "v5.channel.k8s.io");
  EXPECT_EQ(choose_exec_protocol("channel.k8s.io,v4.channel.k8s.io"), "v4.channel.k8s.io");
  EXPECT_EQ(choose_exec_protocol("SPDY/3.1"), "");
  EXPECT_EQ(exec_status(0, {"echo"}), R"({"metadata":{},"status":"Success"})");
  std::string failed = exec_status(127, {"ls", "/"});
  auto doc = parse_json(failed);
  ASSERT_TRUE(doc);
  EXPECT_STREQ((*doc)["reason"].GetString(), "NonZeroExitCode");
  EXPECT_STREQ((*doc)["details"]["causes"][0]["reason"].GetString(), "ExitCode");
  EXPECT_STREQ((*doc)["details"]["causes"][0]["message"].GetString(), "127");
}

TEST(JsonTest, RefusesDeepNestingInsteadOfOverflowingTheStack) {
  std::string deep = std::string(5000, '[') + std::string(5000, ']');
  auto r = parse_json(deep);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("nested"), std::string::npos);
  std::string ok = std::string(100, '[') + std::string(100, ']');
  EXPECT_TRUE(parse_json(ok));
  // Brackets inside strings do not count.
  EXPECT_TRUE(parse_json("{\"a\":\"" + std::string(5000, '[') + "\\\"\"}"));
}

}  // namespace
}  // namespace yurthub::fake
