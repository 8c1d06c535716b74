// What the node's identity may write, rule by rule, against the texts of kube-apiserver v1.26's
// Node authorizer, system:node rules and NodeRestriction admission (cache/node_authority.h).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "cache/node_authority.h"

namespace yurthub::cache {
namespace {

const NodeAuthority kNode("edge-1");

kube::RequestInfo req(const char* method, const std::string& target) {
  return kube::classify_request(method, target, "kubelet/v1.26.1 (linux/amd64) kubernetes/8f94681");
}

// Authorization on the request line: one case per rule.
TEST(NodeAuthority, AuthorizesTheRequestLineAsTheNodeAuthorizer) {
  struct Case {
    const char* method;
    std::string target;
    std::string create_name;
    // "" when allowed, else the whole Status message.
    std::string message;
  };
  const std::string user = "User \"system:node:edge-1\" cannot ";
  const Case cases[] = {
      // Its own Node and its status.
      {"POST", "/api/v1/nodes", "edge-1", ""},
      {"PATCH", "/api/v1/nodes/edge-1/status", "", ""},
      {"PUT", "/api/v1/nodes/edge-1", "", ""},
      {"PATCH", "/api/v1/nodes/edge-2/status", "",
       R"(nodes "edge-2" is forbidden: node "edge-1" is not allowed to modify node "edge-2")"},
      {"POST", "/api/v1/nodes", "edge-2",
       R"(nodes "edge-2" is forbidden: node "edge-1" is not allowed to modify node "edge-2")"},
      {"DELETE", "/api/v1/nodes/edge-1", "",
       R"(nodes "edge-1" is forbidden: )" + user +
           R"(delete resource "nodes" in API group "" at the cluster scope)"},
      // Pods: never their metadata or spec; status (checked on the object) and mirror pods.
      {"PATCH", "/api/v1/namespaces/default/pods/web-0", "",
       R"(pods "web-0" is forbidden: )" + user +
           R"(patch resource "pods" in API group "" in the namespace "default")"},
      {"PUT", "/api/v1/namespaces/default/pods/web-0", "",
       R"(pods "web-0" is forbidden: )" + user +
           R"(update resource "pods" in API group "" in the namespace "default")"},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0/status", "", ""},
      {"POST", "/api/v1/namespaces/default/pods", "static-web-edge-1", ""},
      {"POST", "/api/v1/namespaces/default/pods/web-0/eviction", "", ""},
      {"PATCH", "/api/v1/namespaces/default/pods/web-0/ephemeralcontainers", "",
       R"(pods "web-0" is forbidden: )" + user +
           R"(patch resource "pods/ephemeralcontainers" in API group "" in the namespace "default")"},
      // Core events in any namespace; events.k8s.io never.
      {"POST", "/api/v1/namespaces/kube-system/events", "x.1", ""},
      {"PATCH", "/api/v1/namespaces/default/events/x.1", "", ""},
      {"DELETE", "/api/v1/namespaces/default/events/x.1", "",
       R"(events "x.1" is forbidden: )" + user +
           R"(delete resource "events" in API group "" in the namespace "default")"},
      {"POST", "/apis/events.k8s.io/v1/namespaces/default/events", "x.1",
       R"(events.events.k8s.io is forbidden: )" + user +
           R"(create resource "events" in API group "events.k8s.io" in the namespace "default")"},
      // Its own lease in kube-node-lease.
      {"PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-1", "", ""},
      {"POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", "edge-1", ""},
      {"PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-2", "",
       R"(leases.coordination.k8s.io "edge-2" is forbidden: )" + user +
           R"(update resource "leases" in API group "coordination.k8s.io" in the namespace )"
           R"("kube-node-lease": can only access node lease with the same name as the requesting node)"},
      {"POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", "edge-2",
       R"(leases.coordination.k8s.io "edge-2" is forbidden: can only access node lease with the )"
       R"(same name as the requesting node)"},
      {"PUT", "/apis/coordination.k8s.io/v1/namespaces/default/leases/edge-1", "",
       R"(leases.coordination.k8s.io "edge-1" is forbidden: )" + user +
           R"(update resource "leases" in API group "coordination.k8s.io" in the namespace )"
           R"("default": can only access leases in the "kube-node-lease" system namespace)"},
      {"DELETE", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", "",
       R"(leases.coordination.k8s.io is forbidden: )" + user +
           R"(deletecollection resource "leases" in API group "coordination.k8s.io" in the )"
           R"(namespace "kube-node-lease": can only get, create, update, patch, or delete a node lease)"},
      // Its own CSINode.
      {"PUT", "/apis/storage.k8s.io/v1/csinodes/edge-1", "", ""},
      {"POST", "/apis/storage.k8s.io/v1/csinodes", "edge-2",
       R"(csinodes.storage.k8s.io "edge-2" is forbidden: can only access CSINode with the same )"
       R"(name as the requesting node)"},
      {"PATCH", "/apis/storage.k8s.io/v1/csinodes/edge-2", "",
       R"(csinodes.storage.k8s.io "edge-2" is forbidden: )" + user +
           R"(patch resource "csinodes" in API group "storage.k8s.io" at the cluster scope: can )"
           R"(only access CSINode with the same name as the requesting node)"},
      // Tokens only through the token subresource of a named service account.
      {"POST", "/api/v1/namespaces/default/serviceaccounts/default/token", "", ""},
      {"POST", "/api/v1/namespaces/default/serviceaccounts", "sa",
       R"(serviceaccounts is forbidden: )" + user +
           R"(create resource "serviceaccounts" in API group "" in the namespace "default": can )"
           R"(only create tokens for individual service accounts)"},
      {"PATCH", "/api/v1/namespaces/default/serviceaccounts/default", "",
       R"(serviceaccounts "default" is forbidden: )" + user +
           R"(patch resource "serviceaccounts" in API group "" in the namespace "default": can )"
           R"(only create tokens for individual service accounts)"},
      // Secrets and configmaps are read-only; volumes only readable.
      {"PATCH", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt", "",
       R"(configmaps "kube-root-ca.crt" is forbidden: )" + user +
           R"(patch resource "configmaps" in API group "" in the namespace "default": can only )"
           R"(read resources of this type)"},
      {"PUT", "/api/v1/namespaces/default/secrets/s", "",
       R"(secrets "s" is forbidden: )" + user +
           R"(update resource "secrets" in API group "" in the namespace "default": can only )"
           R"(read resources of this type)"},
      {"DELETE", "/api/v1/persistentvolumes/pv-1", "",
       R"(persistentvolumes "pv-1" is forbidden: )" + user +
           R"(delete resource "persistentvolumes" in API group "" at the cluster scope: can only )"
           R"(get individual resources of this type)"},
      {"PATCH", "/api/v1/namespaces/default/persistentvolumeclaims/data/status", "", ""},
      // Anything no rule names.
      {"PATCH", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/web-abc", "",
       R"(endpointslices.discovery.k8s.io "web-abc" is forbidden: )" + user +
           R"(patch resource "endpointslices" in API group "discovery.k8s.io" in the namespace )"
           R"("default")"},
      {"PUT", "/api/v1/namespaces/default/services/web", "",
       R"(services "web" is forbidden: )" + user +
           R"(update resource "services" in API group "" in the namespace "default")"},
      {"POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", "csr-1", ""},
      // Reads are not this unit's business.
      {"GET", "/api/v1/namespaces/default/secrets/s", "", ""},
  };
  for (const Case& c : cases) {
    auto error = kNode.authorize(req(c.method, c.target), c.create_name);
    if (c.message.empty()) {
      EXPECT_FALSE(error) << c.method << " " << c.target << ": " << error->message;
    } else {
      ASSERT_TRUE(error) << c.method << " " << c.target;
      EXPECT_EQ(error->code, 403u);
      EXPECT_EQ(error->reason, "Forbidden");
      EXPECT_EQ(error->message, c.message) << c.method << " " << c.target;
    }
  }
}

TEST(NodeAuthority, DenialsCarryTheApiserversDetails) {
  auto error = kNode.authorize(
      req("PATCH", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-2"));
  ASSERT_TRUE(error);
  EXPECT_EQ(kube::status_body(*error).find(
                R"("details":{"name":"edge-2","group":"coordination.k8s.io","kind":"leases"})") !=
                std::string::npos,
            true)
      << kube::status_body(*error);
}

rapidjson::Document json(const char* text) {
  rapidjson::Document d;
  d.Parse(text);
  EXPECT_FALSE(d.HasParseError()) << text;
  return d;
}

// NodeRestriction on the objects: one case per check.
TEST(NodeAuthority, AdmitsUpdatesAsNodeRestriction) {
  struct Case {
    const char* target;
    const char* before;
    const char* after;
    std::string message;  // "" when admitted
  };
  const char* pod =
      R"({"metadata":{"name":"web-0","labels":{"app":"web"}},"spec":{"nodeName":"edge-1"},"status":{}})";
  const char* node =
      R"({"metadata":{"name":"edge-1","labels":{"kubernetes.io/hostname":"edge-1"}},"spec":{}})";
  const char* claim =
      R"({"metadata":{"name":"data","resourceVersion":"5"},"spec":{"volumeName":"pv-1"},"status":{"phase":"Bound","capacity":{"storage":"1Gi"}}})";
  const Case cases[] = {
      {"/api/v1/namespaces/default/pods/web-0/status", pod,
       R"({"metadata":{"name":"web-0","labels":{"app":"web"}},"spec":{"nodeName":"edge-1"},"status":{"phase":"Running"}})",
       ""},
      {"/api/v1/namespaces/default/pods/web-0/status",
       R"({"metadata":{"name":"web-0"},"spec":{"nodeName":"edge-2"}})",
       R"({"metadata":{"name":"web-0"},"spec":{"nodeName":"edge-2"},"status":{"phase":"Running"}})",
       R"(pods "web-0" is forbidden: node "edge-1" can only update pod status for pods with spec.nodeName set to itself)"},
      {"/api/v1/namespaces/default/pods/web-0/status", pod,
       R"({"metadata":{"name":"web-0","labels":{"app":"db"}},"spec":{"nodeName":"edge-1"}})",
       R"(pods "web-0" is forbidden: node "edge-1" cannot update labels through pod status)"},
      {"/api/v1/nodes/edge-1/status", node,
       R"({"metadata":{"name":"edge-1","labels":{"kubernetes.io/hostname":"edge-1"}},"spec":{},"status":{"phase":"Running"}})",
       ""},
      {"/api/v1/nodes/edge-1", node,
       R"({"metadata":{"name":"edge-1","labels":{"kubernetes.io/hostname":"edge-1","example.com/team":"a","node.kubernetes.io/x":"1","topology.kubernetes.io/zone":"z"}},"spec":{}})",
       ""},
      {"/api/v1/nodes/edge-1", node,
       R"({"metadata":{"name":"edge-1","labels":{"node-role.kubernetes.io/master":"","node-restriction.kubernetes.io/x":"y"}},"spec":{}})",
       R"(nodes "edge-1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/x, node-role.kubernetes.io/master)"},
      {"/api/v1/nodes/edge-1", node,
       R"({"metadata":{"name":"edge-1","labels":{"kubernetes.io/hostname":"edge-1"}},"spec":{"taints":[{"key":"k","effect":"NoSchedule"}]}})",
       R"(nodes "edge-1" is forbidden: node "edge-1" is not allowed to modify taints)"},
      {"/api/v1/nodes/edge-1", node,
       R"({"metadata":{"name":"edge-1","labels":{"kubernetes.io/hostname":"edge-1"}},"spec":{"configSource":{"configMap":{"name":"c"}}}})",
       R"(nodes "edge-1" is forbidden: node "edge-1" is not allowed to update configSource to a new non-nil configSource)"},
      {"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-1",
       R"({"metadata":{"name":"edge-1"}})", R"({"metadata":{"name":"edge-1","labels":{"x":"y"}}})",
       ""},
      // admitPVCStatus: conditions (and expansion's allocatedResources) only.
      {"/api/v1/namespaces/default/persistentvolumeclaims/data/status", claim,
       R"({"metadata":{"name":"data","resourceVersion":"9"},"spec":{"volumeName":"pv-1"},"status":{"phase":"Bound","capacity":{"storage":"1Gi"},"conditions":[{"type":"FileSystemResizePending","status":"True"}],"allocatedResources":{"storage":"2Gi"}}})",
       ""},
      {"/api/v1/namespaces/default/persistentvolumeclaims/data/status", claim,
       R"({"metadata":{"name":"data"},"spec":{"volumeName":"pv-1"},"status":{"phase":"Bound","capacity":{"storage":"100Gi"}}})",
       R"(persistentvolumeclaims "data" is forbidden: node "edge-1" is not allowed to update fields other than status.conditions)"},
      {"/api/v1/namespaces/default/persistentvolumeclaims/data/status", claim,
       R"({"metadata":{"name":"data","finalizers":["x"]},"spec":{"volumeName":"pv-1"},"status":{"phase":"Bound","capacity":{"storage":"1Gi"}}})",
       R"(persistentvolumeclaims "data" is forbidden: node "edge-1" is not allowed to update fields other than status.conditions)"},
  };
  for (const Case& c : cases) {
    auto before = json(c.before);
    auto after = json(c.after);
    auto error = kNode.admit_update(req("PATCH", c.target), before, after);
    if (c.message.empty()) {
      EXPECT_FALSE(error) << c.target << ": " << error->message;
    } else {
      ASSERT_TRUE(error) << c.target << " " << c.after;
      EXPECT_EQ(error->message, c.message);
      EXPECT_EQ(error->code, 403u);
    }
  }
}

TEST(NodeAuthority, ForbiddenNodeLabels) {
  for (const char* key : {"kubernetes.io/hostname", "kubernetes.io/os", "beta.kubernetes.io/arch",
                          "node.kubernetes.io/instance-type", "topology.kubernetes.io/region",
                          "x.kubelet.kubernetes.io/y", "kubelet.kubernetes.io/y",
                          "node.kubernetes.io/anything", "example.com/x", "plain"}) {
    EXPECT_FALSE(is_forbidden_node_label(key)) << key;
  }
  for (const char* key : {"node-role.kubernetes.io/master", "kubernetes.io/role", "k8s.io/x",
                          "a.k8s.io/x", "node-restriction.kubernetes.io/x",
                          "a.node-restriction.kubernetes.io/x", "topology.kubernetes.io/rack"}) {
    EXPECT_TRUE(is_forbidden_node_label(key)) << key;
  }
}

TEST(NodeAuthority, TokensOnlyForPodsBoundToTheNode) {
  const auto info = req("POST", "/api/v1/namespaces/default/serviceaccounts/web/token");
  auto pod = json(
      R"({"metadata":{"name":"web-0","uid":"u-1"},"spec":{"nodeName":"edge-1","serviceAccountName":"web"}})");
  auto elsewhere = json(
      R"({"metadata":{"name":"web-0","uid":"u-1"},"spec":{"nodeName":"edge-2","serviceAccountName":"web"}})");
  const NodeAuthority::BoundObject bound{"Pod", "v1", "web-0", "u-1"};
  EXPECT_FALSE(kNode.admit_token_request(info, bound, &pod));
  struct Case {
    NodeAuthority::BoundObject bound;
    const rapidjson::Value* pod;
    std::string message;
  };
  const std::string no_edge =
      R"(serviceaccounts "web" is forbidden: User "system:node:edge-1" cannot create resource )"
      R"("serviceaccounts/token" in API group "" in the namespace "default": no relationship found )"
      R"(between node 'edge-1' and this object)";
  const Case cases[] = {
      {bound, &elsewhere, no_edge},
      {{"Secret", "v1", "web-0", "u-1"},
       &pod,
       R"(serviceaccounts "web" is forbidden: node requested token not bound to a pod)"},
      {{"Pod", "v1", "web-0", ""},
       &pod,
       R"(serviceaccounts "web" is forbidden: node requested token with a pod binding without a uid)"},
      {{"Pod", "v1", "web-0", "u-2"},
       &pod,
       R"(serviceaccounts "web" is forbidden: the UID in the bound object reference (u-2) does not )"
       R"(match the UID in record. The object might have been deleted and then recreated)"},
  };
  for (const Case& c : cases) {
    auto error = kNode.admit_token_request(info, c.bound, c.pod);
    ASSERT_TRUE(error) << c.message;
    EXPECT_EQ(error->message, c.message);
  }
}

}  // namespace
}  // namespace yurthub::cache
