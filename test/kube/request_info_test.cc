// Table-driven tests of classify_request against the Kubernetes RequestInfoFactory rules
// (docs/reference/yurthub.md §2.1): one row per rule, expected fields written out in full.
#include "kube/request_info.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace yurthub::kube {
namespace {

struct Case {
  const char* rule;
  const char* method;
  const char* target;
  bool resource;
  const char* verb;
  const char* group;
  const char* version;
  const char* ns;
  const char* resource_name;
  const char* subresource;
  const char* name;
};

const Case kCases[] = {
    // rule, method, target, resource?, verb, group, version, namespace, resource, subresource, name
    {"core get", "GET", "/api/v1/namespaces/default/pods/web-0", true, "get", "", "v1", "default",
     "pods", "", "web-0"},
    {"core list namespaced", "GET", "/api/v1/namespaces/default/pods", true, "list", "", "v1",
     "default", "pods", "", ""},
    {"core list cluster-wide", "GET", "/api/v1/pods", true, "list", "", "v1", "", "pods", "", ""},
    {"HEAD is get", "HEAD", "/api/v1/nodes/n1", true, "get", "", "v1", "", "nodes", "", "n1"},
    {"watch=true makes a watch", "GET", "/api/v1/pods?watch=true", true, "watch", "", "v1", "",
     "pods", "", ""},
    {"watch=1 makes a watch", "GET", "/api/v1/pods?watch=1", true, "watch", "", "v1", "", "pods",
     "", ""},
    {"bare watch param is true", "GET", "/api/v1/pods?watch", true, "watch", "", "v1", "", "pods",
     "", ""},
    {"watch=false is a list", "GET", "/api/v1/pods?watch=false", true, "list", "", "v1", "", "pods",
     "", ""},
    {"watch=0 is a list", "GET", "/api/v1/pods?watch=0", true, "list", "", "v1", "", "pods", "",
     ""},
    {"watch=No is a list", "GET", "/api/v1/pods?watch=No", true, "list", "", "v1", "", "pods", "",
     ""},
    {"watch param ignored on a named get", "GET", "/api/v1/namespaces/a/pods/p?watch=true", true,
     "get", "", "v1", "a", "pods", "", "p"},
    {"legacy /watch/ path", "GET", "/api/v1/watch/namespaces/kube-system/configmaps", true, "watch",
     "", "v1", "kube-system", "configmaps", "", ""},
    {"legacy /watch/ path with name", "GET", "/api/v1/watch/namespaces/a/pods/p", true, "watch", "",
     "v1", "a", "pods", "", "p"},
    {"named group", "GET", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", true,
     "list", "discovery.k8s.io", "v1", "default", "endpointslices", "", ""},
    {"cluster-scoped CRD", "GET", "/apis/apps.openyurt.io/v1beta1/nodepools/pool-a", true, "get",
     "apps.openyurt.io", "v1beta1", "", "nodepools", "", "pool-a"},
    {"status subresource", "PATCH", "/api/v1/namespaces/default/pods/web-0/status", true, "patch",
     "", "v1", "default", "pods", "status", "web-0"},
    {"node status", "PUT", "/api/v1/nodes/edge-1/status", true, "update", "", "v1", "", "nodes",
     "status", "edge-1"},
    {"exec subresource", "POST", "/api/v1/namespaces/a/pods/p/exec?command=ls", true, "create", "",
     "v1", "a", "pods", "exec", "p"},
    {"create", "POST", "/api/v1/namespaces/default/configmaps", true, "create", "", "v1", "default",
     "configmaps", "", ""},
    {"delete", "DELETE", "/api/v1/namespaces/default/pods/x", true, "delete", "", "v1", "default",
     "pods", "", "x"},
    {"delete without name is deletecollection", "DELETE", "/api/v1/namespaces/default/pods", true,
     "deletecollection", "", "v1", "default", "pods", "", ""},
    {"unknown method has empty verb", "OPTIONS", "/api/v1/pods", true, "", "", "v1", "", "pods", "",
     ""},
    {"GET a namespace: name and namespace both set", "GET", "/api/v1/namespaces/foo", true, "get",
     "", "v1", "foo", "namespaces", "", "foo"},
    {"namespace status is a namespace subresource", "PUT", "/api/v1/namespaces/foo/status", true,
     "update", "", "v1", "foo", "namespaces", "status", "foo"},
    {"namespace finalize", "PUT", "/api/v1/namespaces/foo/finalize", true, "update", "", "v1",
     "foo", "namespaces", "finalize", "foo"},
    {"list namespaces", "GET", "/api/v1/namespaces", true, "list", "", "v1", "", "namespaces", "",
     ""},
    {"proxy verb keeps no subresource", "GET", "/api/v1/proxy/namespaces/a/pods/p/some/path", true,
     "proxy", "", "v1", "a", "pods", "", "p"},
    {"field selector metadata.name fills the name", "GET",
     "/api/v1/namespaces/kube-system/configmaps?fieldSelector=metadata.name%3Dyurt-hub-cfg", true,
     "list", "", "v1", "kube-system", "configmaps", "", "yurt-hub-cfg"},
    {"metadata.name== also fills it (watch)", "GET",
     "/api/v1/nodes?watch=1&fieldSelector=metadata.name%3D%3Dedge-1", true, "watch", "", "v1", "",
     "nodes", "", "edge-1"},
    {"metadata.name among other terms", "GET",
     "/api/v1/pods?fieldSelector=spec.nodeName%3Dn%2Cmetadata.name%3Dp", true, "list", "", "v1", "",
     "pods", "", "p"},
    {"metadata.name!= does not fill it", "GET", "/api/v1/pods?fieldSelector=metadata.name%21%3Dp",
     true, "list", "", "v1", "", "pods", "", ""},
    {"invalid path segment name is not used", "GET",
     "/api/v1/pods?fieldSelector=metadata.name%3D..", true, "list", "", "v1", "", "pods", "", ""},
    {"trailing slash ignored", "GET", "/api/v1/pods/", true, "list", "", "v1", "", "pods", "", ""},
    {"percent-encoded path", "GET", "/api/v1/namespaces/default/configmaps/a%2Eb", true, "get", "",
     "v1", "default", "configmaps", "", "a.b"},
    {"'+' in a path is not a space", "GET", "/api/v1/namespaces/default/configmaps/a+b", true,
     "get", "", "v1", "default", "configmaps", "", "a+b"},
    {"%2F in a path splits it", "GET", "/api/v1/namespaces/default/configmaps%2Fx", true, "get", "",
     "v1", "default", "configmaps", "", "x"},
    // Go's net/http answers 400 to these before the apiserver sees them; the hub classifies the
    // path as sent, with no escape decoded.
    {"path with an invalid escape is not decoded", "GET",
     "/api/v1/namespaces/default/configmaps/a%2Eb%zz", true, "get", "", "v1", "default",
     "configmaps", "", "a%2Eb%zz"},
    {"path with a lone % is not decoded", "GET", "/api/v1/namespaces/default/configmaps/a%2F%",
     true, "get", "", "v1", "default", "configmaps", "", "a%2F%"},
    // Non-resource requests: the verb is the lowercased method.
    {"version", "GET", "/version", false, "get", "", "", "", "", "", ""},
    {"/api discovery", "GET", "/api", false, "get", "", "", "", "", "", ""},
    {"/api/v1 discovery", "GET", "/api/v1", false, "get", "", "", "", "", "", ""},
    {"/apis/<group>/<version> discovery", "GET", "/apis/apps/v1", false, "get", "", "", "", "", "",
     ""},
    {"/apis/<group> discovery", "GET", "/apis/apps", false, "get", "", "", "", "", "", ""},
    {"healthz", "GET", "/healthz", false, "get", "", "", "", "", "", ""},
    {"unknown prefix", "GET", "/foo/v1/pods", false, "get", "", "", "", "", "", ""},
    {"non-resource POST", "POST", "/openapi/v2", false, "post", "", "", "", "", "", ""},
    // Any other method is one label value, not whatever the client wrote (metric cardinality).
    {"non-resource unknown method", "BREW", "/healthz", false, "other", "", "", "", "", "", ""},
    {"resource unknown method", "BREW", "/api/v1/pods", true, "", "", "v1", "", "pods", "", ""},
};

class RequestInfoRules : public testing::TestWithParam<Case> {};

TEST_P(RequestInfoRules, Classifies) {
  const Case& c = GetParam();
  RequestInfo info = classify_request(c.method, c.target, "kubelet/v1.32.4 (linux/amd64)");
  EXPECT_EQ(info.is_resource_request, c.resource);
  EXPECT_EQ(verb_name(info.verb), c.verb);
  EXPECT_EQ(info.api_group, c.group);
  EXPECT_EQ(info.api_version, c.version);
  EXPECT_EQ(info.namespace_name, c.ns);
  EXPECT_EQ(info.resource, c.resource_name);
  EXPECT_EQ(info.subresource, c.subresource);
  EXPECT_EQ(info.name, c.name);
}

INSTANTIATE_TEST_SUITE_P(Kubernetes, RequestInfoRules, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& p) {
                           std::string name = p.param.rule;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name + "_" + std::to_string(p.index);
                         });

TEST(RequestInfo, ComponentIsUserAgentBeforeFirstSlashLowercased) {
  struct {
    const char* user_agent;
    const char* component;
  } cases[] = {
      {"kubelet/v1.30.1 (linux/amd64) kubernetes/abc", "kubelet"},
      {"Kube-Proxy/v1.32", "kube-proxy"},
      {"cilium-agent", "cilium-agent"},
      {"", ""},
      {"/leading-slash", ""},
  };
  for (const auto& c : cases) {
    RequestInfo info = classify_request("GET", "/api/v1/pods", c.user_agent);
    EXPECT_EQ(info.component, c.component) << c.user_agent;
  }
  EXPECT_EQ(classify_request("GET", "/", "Kubelet/V1 X").user_agent, "kubelet/v1 x");
}

TEST(RequestInfo, QueryParametersAreDecoded) {
  RequestInfo info = classify_request(
      "GET",
      "/api/v1/pods?labelSelector=app+in+%28web%2Cdb%29&fieldSelector=spec.nodeName%3Dedge-1"
      "&resourceVersion=12345&timeoutSeconds=300&allowWatchBookmarks=true&watch=true&limit=500"
      "&continue=abc%3D",
      "kubelet");
  EXPECT_EQ(info.verb, Verb::Watch);
  EXPECT_EQ(info.label_selector, "app in (web,db)");
  EXPECT_EQ(info.field_selector, "spec.nodeName=edge-1");
  EXPECT_EQ(info.resource_version, "12345");
  ASSERT_TRUE(info.timeout_seconds.has_value());
  EXPECT_EQ(*info.timeout_seconds, 300);
  EXPECT_TRUE(info.allow_watch_bookmarks);
  ASSERT_TRUE(info.limit.has_value());
  EXPECT_EQ(*info.limit, 500);
  EXPECT_EQ(info.continue_token, "abc=");
  EXPECT_EQ(info.path, "/api/v1/pods");
}

// url.Values keeps every value and the apiserver's conversions take the first.
TEST(RequestInfo, ARepeatedParameterCountsWithItsFirstValue) {
  EXPECT_EQ(classify_request("GET", "/api/v1/pods?watch=0&watch=1", "").verb, Verb::List);
  EXPECT_EQ(classify_request("GET", "/api/v1/pods?watch=1&watch=0", "").verb, Verb::Watch);
  // A dropped pair is no value: the first one the apiserver sees counts.
  EXPECT_EQ(classify_request("GET", "/api/v1/pods?watch=%zz&watch=0&watch=1", "").verb, Verb::List);
  const RequestInfo info = classify_request(
      "GET",
      "/api/v1/pods?labelSelector=a%3Db&fieldSelector=spec.nodeName%3Dn1&limit=5&continue=c1"
      "&resourceVersion=7&timeoutSeconds=30&allowWatchBookmarks=false&labelSelector=c&limit=6"
      "&fieldSelector=spec.nodeName%3Dn2&continue=c2&resourceVersion=8&timeoutSeconds=60"
      "&allowWatchBookmarks=true",
      "");
  EXPECT_EQ(info.label_selector, "a=b");
  EXPECT_EQ(info.field_selector, "spec.nodeName=n1");
  EXPECT_EQ(info.limit, 5);
  EXPECT_EQ(info.continue_token, "c1");
  EXPECT_EQ(info.resource_version, "7");
  EXPECT_EQ(info.timeout_seconds, 30);
  EXPECT_FALSE(info.allow_watch_bookmarks);
}

TEST(RequestInfo, MalformedNumbersAreAbsentNotZero) {
  RequestInfo info = classify_request("GET", "/api/v1/pods?limit=ten&timeoutSeconds=5s", "x");
  EXPECT_FALSE(info.limit.has_value());
  EXPECT_FALSE(info.timeout_seconds.has_value());
}

TEST(RequestInfo, LongRunning) {
  EXPECT_TRUE(classify_request("GET", "/api/v1/pods?watch=1", "").is_long_running());
  EXPECT_TRUE(classify_request("POST", "/api/v1/namespaces/a/pods/p/exec", "").is_long_running());
  EXPECT_TRUE(
      classify_request("POST", "/api/v1/namespaces/a/pods/p/portforward", "").is_long_running());
  EXPECT_TRUE(classify_request("GET", "/api/v1/namespaces/a/pods/p/log", "").is_long_running());
  EXPECT_FALSE(classify_request("GET", "/api/v1/pods", "").is_long_running());
  EXPECT_FALSE(
      classify_request("PATCH", "/api/v1/namespaces/a/pods/p/status", "").is_long_running());
}

TEST(QueryUnescape, PlusIsASpaceAndBadEscapesAreErrors) {
  std::string scratch;
  EXPECT_EQ(query_unescape("a+b%20c", scratch), "a b c");
  EXPECT_EQ(query_unescape("%2f%2F%41", scratch), "//A");
  EXPECT_EQ(query_unescape("%2B", scratch), "+");
  EXPECT_EQ(query_unescape("%00", scratch), std::string_view("\0", 1));  // Go decodes it too
  EXPECT_EQ(query_unescape("plain", scratch), "plain");
  EXPECT_EQ(query_unescape("", scratch), "");
  // url.QueryUnescape's EscapeErrors.
  EXPECT_FALSE(query_unescape("100%", scratch));
  EXPECT_FALSE(query_unescape("%4", scratch));
  EXPECT_FALSE(query_unescape("%zz", scratch));
  EXPECT_FALSE(query_unescape("a%4g", scratch));
  EXPECT_FALSE(query_unescape("%%41", scratch));
}

// The pairs Go's url.ParseQuery yields for the same query, in order.
std::vector<std::pair<std::string, std::string>> pairs_of(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  for_each_query_param(
      query, [&](std::string_view key, std::string_view value) { out.emplace_back(key, value); });
  return out;
}

TEST(ForEachQueryParam, ReadsTheQueryAsGoParseQuery) {
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(pairs_of(""), Pairs{});
  EXPECT_EQ(pairs_of("a=1&b=x+y&a=2"), (Pairs{{"a", "1"}, {"b", "x y"}, {"a", "2"}}));
  EXPECT_EQ(pairs_of("watch&limit="), (Pairs{{"watch", ""}, {"limit", ""}}));
  EXPECT_EQ(pairs_of("&&a=1&&"), (Pairs{{"a", "1"}}));  // empty pairs are skipped
  EXPECT_EQ(pairs_of("=x&a==b"), (Pairs{{"", "x"}, {"a", "=b"}}));
  EXPECT_EQ(pairs_of("a%3Db=c%26d"), (Pairs{{"a=b", "c&d"}}));
  // A pair with an invalid escape or a ';' is dropped; the others stay.
  EXPECT_EQ(pairs_of("a=%zz&b=1&c%=2&d=3%"), (Pairs{{"b", "1"}}));
  EXPECT_EQ(pairs_of("a=1;b=2&c=3&d=%3B"), (Pairs{{"c", "3"}, {"d", ";"}}));
  // Characters RFC 3986 does not allow in a query, which Go accepts as they are.
  EXPECT_EQ(pairs_of("l=a|b{c}\"x y"), (Pairs{{"l", "a|b{c}\"x y"}}));
}

// The hub classifies by the parameters the apiserver sees: not those of dropped pairs.
TEST(RequestInfo, DroppedPairsDoNotCount) {
  EXPECT_EQ(classify_request("GET", "/api/v1/pods?watch=%zz", "").verb, Verb::List);
  EXPECT_EQ(classify_request("GET", "/api/v1/pods?watch=1%", "").verb, Verb::List);
  EXPECT_EQ(classify_request("GET", "/api/v1/pods?watch=1;x=2", "").verb, Verb::List);
  EXPECT_EQ(classify_request("GET", "/api/v1/pods?x=%zz&watch=1", "").verb, Verb::Watch);
  const RequestInfo info = classify_request(
      "GET", "/api/v1/pods?labelSelector=app%3Dweb%&fieldSelector=spec.nodeName%3Dn;x", "");
  EXPECT_EQ(info.label_selector, "");
  EXPECT_EQ(info.field_selector, "");
}

}  // namespace
}  // namespace yurthub::kube

namespace yurthub::kube {
namespace {

TEST(OriginForm, AbsoluteTargetsBecomeTheirPath) {
  EXPECT_EQ(origin_form("/api/v1/pods?watch=1"), "/api/v1/pods?watch=1");
  EXPECT_EQ(origin_form("http://127.0.0.1:10261/api/v1/namespaces/default/pods/web-0"),
            "/api/v1/namespaces/default/pods/web-0");
  EXPECT_EQ(origin_form("HTTPS://kubernetes.default.svc/apis?x=1"), "/apis?x=1");
  EXPECT_EQ(origin_form("http://host?labelSelector=a"), "/?labelSelector=a");
  EXPECT_EQ(origin_form("http://host"), "/");
  EXPECT_FALSE(origin_form("*"));
  EXPECT_FALSE(origin_form("host:443"));
  EXPECT_FALSE(origin_form("ftp://host/x"));
  EXPECT_FALSE(origin_form(""));
  EXPECT_EQ(origin_form("http://user@[::1]:10261/api/v1/pods?watch=1&limit=5"),
            "/api/v1/pods?watch=1&limit=5");
  EXPECT_EQ(origin_form("http://host/a%2Fb?l=x%3Dy"), "/a%2Fb?l=x%3Dy");  // escapes kept
  EXPECT_FALSE(origin_form("x:\x85"));             // Boost 1.81 asserts on it: kept from its parser
  EXPECT_FALSE(origin_form("http:/api/v1/pods"));  // no authority
  EXPECT_FALSE(origin_form("http://host/a%zz"));   // Go's ParseRequestURI refuses it too
  EXPECT_FALSE(origin_form("http://host/api#x"));  // a request-target has no fragment
  EXPECT_FALSE(origin_form("http://host/a b"));
}

}  // namespace
}  // namespace yurthub::kube

namespace yurthub::kube {
namespace {

TEST(RequestInfoLimits, TimeoutSecondsIsClampedToADay) {
  EXPECT_EQ(
      classify_request("GET", "/api/v1/pods?watch=1&timeoutSeconds=9223372036854775807", "kubelet")
          .timeout_seconds,
      86400);
  EXPECT_EQ(
      classify_request("GET", "/api/v1/pods?watch=1&timeoutSeconds=300", "kubelet").timeout_seconds,
      300);
}

}  // namespace
}  // namespace yurthub::kube
