// Tests for filters/service_env_updater.cc: explicit KUBERNETES_SERVICE_HOST/PORT env entries of
// spec.containers get the hub's host and port (never added, initContainers and look-alike names
// untouched, valueFrom kept), odd shapes kept; ready() and handles(); may_change() true whenever
// apply() changes the pod, false for text without the two names.
#include "filters/service_env_updater.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test/filters/filter_test_support.h"

namespace yurthub::filters {
namespace {

using test_support::ApplyCase;

// A container like those of pods-list-node.body; `env` is its env JSON (empty: no env).
std::string container(const std::string& name, const std::string& env) {
  return R"({"name":")" + name + R"(","image":"nginx:1.25",)" +
         (env.empty() ? "" : R"("env":)" + env + ",") +
         R"("ports":[{"containerPort":8080,"protocol":"TCP"}],"resources":{},)"
         R"("imagePullPolicy":"IfNotPresent"})";
}

// A Pod on edge-node-1 with the given containers and initContainers (JSON arrays; empty init:
// none); `head` is spliced first (kind/apiVersion of watch and get objects).
std::string pod(const std::string& containers, const std::string& init = "",
                const std::string& head = "") {
  return "{" + head +
         R"("metadata":{"name":"web-0","namespace":"default","resourceVersion":"229",)"
         R"("labels":{"app":"web"}},"spec":{)" +
         (init.empty() ? "" : R"("initContainers":)" + init + ",") + R"("containers":)" +
         containers +
         R"(,"restartPolicy":"Always","dnsPolicy":"ClusterFirst","nodeName":"edge-node-1",)"
         R"("enableServiceLinks":true},"status":{"phase":"Running","qosClass":"BestEffort"}})";
}

std::string var(const std::string& name, const std::string& value) {
  return R"({"name":")" + name + R"(","value":")" + value + "\"}";
}

const std::string kApiEnv = "[" + var("KUBERNETES_SERVICE_HOST", "10.0.0.1") + "," +
                            var("LOG_LEVEL", "info") + "," +
                            var("KUBERNETES_SERVICE_PORT", "6443") + "]";
const std::string kHubEnv = "[" + var("KUBERNETES_SERVICE_HOST", "169.254.2.1") + "," +
                            var("LOG_LEVEL", "info") + "," +
                            var("KUBERNETES_SERVICE_PORT", "10268") + "]";

std::string one(const std::string& env) { return pod("[" + container("app", env) + "]"); }

std::vector<ApplyCase> apply_cases() {
  const std::string kHead = R"("kind":"Pod","apiVersion":"v1",)";
  const std::string kHostOnly = "[" + var("KUBERNETES_SERVICE_HOST", "10.0.0.1") + "]";
  std::vector<ApplyCase> cases = {
      {"both variables", one(kApiEnv), {}, Verdict::Modified, one(kHubEnv)},
      {"get/watch object",
       pod("[" + container("app", kApiEnv) + "]", "", kHead),
       {},
       Verdict::Modified,
       pod("[" + container("app", kHubEnv) + "]", "", kHead)},
      {"host only: port not added",
       one(kHostOnly),
       {},
       Verdict::Modified,
       one("[" + var("KUBERNETES_SERVICE_HOST", "169.254.2.1") + "]")},
      {"every container",
       pod("[" + container("app", kApiEnv) + "," + container("plain", "") + "," +
           container("side", kHostOnly) + "]"),
       {},
       Verdict::Modified,
       pod("[" + container("app", kHubEnv) + "," + container("plain", "") + "," +
           container("side", "[" + var("KUBERNETES_SERVICE_HOST", "169.254.2.1") + "]") + "]")},
      {"initContainers untouched",
       pod("[" + container("app", kApiEnv) + "]", "[" + container("init", kApiEnv) + "]"),
       {},
       Verdict::Modified,
       pod("[" + container("app", kHubEnv) + "]", "[" + container("init", kApiEnv) + "]")},
      {"only initContainers set them",
       pod("[" + container("app", "") + "]", "[" + container("init", kApiEnv) + "]"),
       {},
       Verdict::Keep,
       ""},
      {"IPv6 hub, custom port", one(kApiEnv),
       [](ClusterView& v) {
         v.hub_host = "fd00::2:1";
         v.hub_port = 443;
       },
       Verdict::Modified,
       one("[" + var("KUBERNETES_SERVICE_HOST", "fd00::2:1") + "," + var("LOG_LEVEL", "info") +
           "," + var("KUBERNETES_SERVICE_PORT", "443") + "]")},
      {"valueFrom kept, value set",
       one(R"([{"name":"KUBERNETES_SERVICE_HOST","valueFrom":{"configMapKeyRef":)"
           R"({"name":"api","key":"host"}}}])"),
       {},
       Verdict::Modified,
       one(R"([{"name":"KUBERNETES_SERVICE_HOST","valueFrom":{"configMapKeyRef":)"
           R"({"name":"api","key":"host"}},"value":"169.254.2.1"}])")},
      {"already the hub", one(kHubEnv), {}, Verdict::Keep, ""},
      {"look-alike names untouched",
       one("[" + var("KUBERNETES_SERVICE_PORT_HTTPS", "443") + "," +
           var("kubernetes_service_host", "x") + "]"),
       {},
       Verdict::Keep,
       ""},
      {"no env", one(""), {}, Verdict::Keep, ""},
      {"empty env", one("[]"), {}, Verdict::Keep, ""},
      {"env not an array", one(R"({"KUBERNETES_SERVICE_HOST":"10.0.0.1"})"), {}, Verdict::Keep, ""},
      {"odd env entries skipped",
       one(R"(["KUBERNETES_SERVICE_HOST",{"name":1,"value":"x"},)" +
           var("KUBERNETES_SERVICE_PORT", "6443") + "]"),
       {},
       Verdict::Modified,
       one(R"(["KUBERNETES_SERVICE_HOST",{"name":1,"value":"x"},)" +
           var("KUBERNETES_SERVICE_PORT", "10268") + "]")},
      {"container not an object", pod("[\"app\"]"), {}, Verdict::Keep, ""},
      {"containers not an array", pod("{}"), {}, Verdict::Keep, ""},
      {"spec missing",
       R"({"metadata":{"name":"web-0","namespace":"default"}})",
       {},
       Verdict::Keep,
       ""},
      {"not an object", R"("pod")", {}, Verdict::Keep, ""},
  };
  return cases;
}

TEST(ServiceEnvUpdaterFilter, Apply) {
  test_support::run_apply_cases(*make_service_env_updater_filter(), apply_cases());
}

// The FilterChain passes a pod on unparsed when may_change() is false (filter_chain.h).
TEST(ServiceEnvUpdaterFilter, MayChangeOnlyWithTheNamesInTheText) {
  auto filter = make_service_env_updater_filter();
  for (const ApplyCase& c : apply_cases()) {
    if (c.verdict != Verdict::Keep) {
      EXPECT_TRUE(filter->may_change(c.input)) << c.name;
    }
  }
  struct Case {
    std::string text;
    bool may_change;
  };
  const std::vector<Case> cases = {
      {one(kApiEnv), true},
      {R"({"type":"MODIFIED","object":)" + one(kApiEnv) + "}", true},  // a whole watch event
      {"KUBERNETES_SERVICE_PORT", true},
      {"not JSON KUBERNETES_SERVICE_HOST", true},
      {"KUBERNETES_SERVICE_PORT_HTTPS", true},  // parsed, then kept
      {R"(a KUBERNETES_SERVICE_ prefix, then KUBERNETES_SERVICE_HOST)", true},
      {one(""), false},
      {one("[" + var("LOG_LEVEL", "info") + "]"), false},
      {"a KUBERNETES_SERVICE_ prefix", false},
      {"KUBERNETES_SERVICE_", false},
      {"KUBERNETES_SERVICE_HOS", false},
      {"kubernetes_service_host KUBERNETES-SERVICE-PORT", false},
      {"", false},
  };
  for (const Case& c : cases) EXPECT_EQ(filter->may_change(c.text), c.may_change) << c.text;
}

TEST(ServiceEnvUpdaterFilter, ReadyOnceHubHostIsKnown) {
  test_support::expect_ready_only_with_hub_host(*make_service_env_updater_filter(),
                                                "serviceenvupdater");
}

TEST(ServiceEnvUpdaterFilter, Handles) {
  auto filter = make_service_env_updater_filter();
  test_support::expect_handles(
      *filter, {
                   {"GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1", true},
                   {"GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1&watch=1", true},
                   {"GET", "/api/v1/namespaces/default/pods/web-0", true},
                   {"PATCH", "/api/v1/namespaces/default/pods/web-0", false},
                   {"POST", "/api/v1/namespaces/default/pods", false},
                   {"DELETE", "/api/v1/namespaces/default/pods/web-0", false},
                   {"GET", "/api/v1/namespaces/default/pods/web-0/log", false},
                   {"GET", "/apis/example.com/v1/pods", false},
                   {"GET", "/api/v1/services", false},
               });
}

}  // namespace
}  // namespace yurthub::filters
