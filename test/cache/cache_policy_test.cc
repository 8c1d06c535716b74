// CachePolicy: which components and requests are cached (docs/reference/yurthub.md §2.3-2.4), and
// the list identities that keep different selectors apart (YurtHub #1963).
#include "cache/cache_policy.h"

#include <gtest/gtest.h>

namespace yurthub::cache {
namespace {

kube::RequestInfo request(const char* method, const char* target,
                          const char* agent = "kubelet/v1.32.4") {
  return kube::classify_request(method, target, agent);
}

TEST(CachePolicy, DefaultAgentsAndConfigMapExtras) {
  CachePolicy policy;
  for (const char* c : {"kubelet", "kube-proxy", "flanneld", "coredns", "raven-agent-ds",
                        "yurttunnel-agent", "yurthub"}) {
    EXPECT_TRUE(policy.is_agent(c)) << c;
  }
  EXPECT_FALSE(policy.is_agent("kubectl"));
  EXPECT_FALSE(policy.is_agent(""));
  policy.set_extra_agents(" kubectl ,cilium-agent,, ");
  EXPECT_TRUE(policy.is_agent("kubectl"));
  EXPECT_TRUE(policy.is_agent("cilium-agent"));
  EXPECT_TRUE(policy.is_agent("kubelet"));  // defaults cannot be removed
  policy.set_extra_agents("*");
  EXPECT_TRUE(policy.is_agent("anything"));
  EXPECT_FALSE(policy.is_agent(""));  // still nothing without a User-Agent
  policy.set_extra_agents("");
  EXPECT_FALSE(policy.is_agent("kubectl"));
}

TEST(CachePolicy, CacheableRequests) {
  CachePolicy policy;
  struct {
    const char* method;
    const char* target;
    const char* agent;
    bool cacheable;
  } cases[] = {
      {"GET", "/api/v1/namespaces/default/pods/web-0", "kubelet/v1", true},
      {"GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1", "kubelet/v1", true},
      {"GET", "/api/v1/pods?watch=1", "kubelet/v1", true},
      {"GET", "/api/v1/namespaces/default/pods/web-0/status", "kubelet/v1", true},
      {"GET", "/api/v1/namespaces/default/pods/web-0/log", "kubelet/v1", false},
      {"POST", "/api/v1/namespaces/default/pods", "kubelet/v1", false},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0/status", "kubelet/v1", false},
      {"DELETE", "/api/v1/namespaces/default/pods/web-0", "kubelet/v1", false},
      {"GET", "/apis/certificates.k8s.io/v1/certificatesigningrequests", "kubelet/v1", false},
      {"GET", "/version", "kubelet/v1", false},
      {"GET", "/api/v1/pods", "kubectl/v1.32", false},
      {"GET", "/api/v1/pods", "", false},
      {"GET", "/apis/discovery.k8s.io/v1/endpointslices?watch=true", "kube-proxy/v1.32", true},
      // A streaming list is cached; a shard of a list (1.36's alpha ShardedListAndWatch) is not.
      {"GET",
       "/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&"
       "allowWatchBookmarks=true",
       "kubelet/v1.35", true},
      {"GET", "/api/v1/pods?shardSelector=shardRange(object.metadata.uid%2C%270x0%27%2C%270x8%27)",
       "kubelet/v1.36", false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(policy.cacheable(request(c.method, c.target, c.agent)), c.cacheable)
        << c.method << " " << c.target;
  }
  auto metadata_only = request("GET", "/api/v1/pods");
  metadata_only.accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
  EXPECT_FALSE(policy.cacheable(metadata_only));
}

TEST(CachePolicy, IdentitiesSeparateSelectors) {
  CachePolicy policy;
  auto by_node = policy.identity(request("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1"));
  auto by_label = policy.identity(request("GET", "/api/v1/pods?labelSelector=app%3Dweb"));
  auto watch =
      policy.identity(request("GET", "/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3D%3Dn1"));
  ASSERT_TRUE(by_node && by_label && watch);
  EXPECT_NE(by_node->key(), by_label->key());
  EXPECT_EQ(by_node->key(), watch->key());  // a list and the watch that follows it share a set
  EXPECT_EQ(by_node->field_selector, "spec.nodeName=n1");

  auto get = policy.identity(request("GET", "/api/v1/namespaces/default/pods/web-0"));
  ASSERT_TRUE(get);
  EXPECT_TRUE(get->is_get_set());
  EXPECT_TRUE(get->namespace_name.empty());  // one get set per resource
  // The writer tells a GET set's ops from a list's or a watch's by the key alone.
  EXPECT_TRUE(ListIdentity::may_be_get_set_key(get->key()));
  EXPECT_TRUE(ListIdentity::may_be_get_set_key(ListIdentity{*get}.get_set().key()));
  for (const auto* list : {&*by_node, &*by_label, &*watch}) {
    EXPECT_FALSE(ListIdentity::may_be_get_set_key(list->key())) << list->key();
  }
  EXPECT_FALSE(
      policy.identity(request("GET", "/api/v1/pods?labelSelector=a%20in%20(")).has_value());
}

TEST(ListIdentity, AGetSetsKeyWrittenAtOnceIsItsIdentitysKey) {
  for (const std::string owner : {"", "token:abc"}) {
    ListIdentity pods{"kubelet", "", "v1", "pods", "default", "app=web", "", owner};
    EXPECT_EQ(ListIdentity::get_set_key("kubelet", "", "v1", "pods", owner), pods.get_set().key());
    ListIdentity leases{"kubelet", "coordination.k8s.io", "v1", "leases", "", "", "", owner};
    EXPECT_EQ(ListIdentity::get_set_key("kubelet", "coordination.k8s.io", "v1", "leases", owner),
              leases.get_set().key());
  }
  EXPECT_NE(ListIdentity::get_set_key("kubelet", "", "v1", "pods", "token:abc"),
            ListIdentity::get_set_key("kubelet", "", "v1", "pods"));
}

TEST(ListIdentity, KeyRoundTripsAndPrefixes) {
  ListIdentity id{"kubelet", "discovery.k8s.io", "v1", "endpointslices", "kube-system", "a=b",
                  "x=y"};
  auto parsed = ListIdentity::parse(id.key());
  ASSERT_TRUE(parsed);
  EXPECT_EQ(*parsed, id);
  EXPECT_EQ(
      id.key().rfind(
          ListIdentity::resource_prefix("kubelet", "discovery.k8s.io", "v1", "endpointslices"), 0),
      0u);
  EXPECT_EQ(id.key().rfind(ListIdentity::component_prefix("kubelet"), 0), 0u);
  EXPECT_NE(id.key().rfind(ListIdentity::component_prefix("kube"), 0), 0u);
  EXPECT_FALSE(ListIdentity::parse(std::string_view("too\0few", 7)).has_value());
}

TEST(DiscoveryPaths, OnlyTheDocumentsKubectlNeeds) {
  for (const char* p :
       {"/version", "/api", "/apis", "/api/v1", "/apis/apps/v1", "/apis/discovery.k8s.io/v1"}) {
    EXPECT_TRUE(is_cached_discovery_path(p)) << p;
  }
  for (const char* p :
       {"/healthz", "/apis/apps", "/apis/apps/v1/deployments", "/openapi/v2", "/api/v1/pods"}) {
    EXPECT_FALSE(is_cached_discovery_path(p)) << p;
  }
}

}  // namespace
}  // namespace yurthub::cache
