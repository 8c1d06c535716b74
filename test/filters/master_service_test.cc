// Tests for filters/master_service.cc: the default/kubernetes Service is pointed at the hub
// (clusterIP, clusterIPs, the "https" port; targetPort untouched) in list items and watch
// objects; other Services and odd shapes pass unchanged; ready() and handles().
#include "filters/master_service.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test/filters/filter_test_support.h"

namespace yurthub::filters {
namespace {

using test_support::ApplyCase;

// A Service as the v1.26 apiserver lists it (test/testdata/fixtures/apiserver-v1.26), with
// `head` spliced before metadata (kind/apiVersion on watch objects) and the given spec.
std::string service(const std::string& ns, const std::string& name, const std::string& spec,
                    const std::string& head = "") {
  return "{" + head + R"("metadata":{"name":")" + name + R"(","namespace":")" + ns +
         R"(","uid":"c5497c87-1515-49ab-a668-0146d61b11df","resourceVersion":"189",)"
         R"("labels":{"component":"apiserver","provider":"kubernetes"}},"spec":)" +
         spec + R"(,"status":{"loadBalancer":{}}})";
}

const std::string kSpec =
    R"({"ports":[{"name":"https","protocol":"TCP","port":443,"targetPort":6443}],)"
    R"("clusterIP":"10.96.0.1","clusterIPs":["10.96.0.1"],"type":"ClusterIP",)"
    R"("sessionAffinity":"None","ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack"})";
const std::string kHubSpec =
    R"({"ports":[{"name":"https","protocol":"TCP","port":10268,"targetPort":6443}],)"
    R"("clusterIP":"169.254.2.1","clusterIPs":["169.254.2.1"],"type":"ClusterIP",)"
    R"("sessionAffinity":"None","ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack"})";
const std::string kWatchHead = R"("kind":"Service","apiVersion":"v1",)";

TEST(MasterServiceFilter, Apply) {
  auto filter = make_master_service_filter();
  const std::vector<ApplyCase> cases = {
      {"list item rewritten",
       service("default", "kubernetes", kSpec),
       {},
       Verdict::Modified,
       service("default", "kubernetes", kHubSpec)},
      {"watch object rewritten",
       service("default", "kubernetes", kSpec, kWatchHead),
       {},
       Verdict::Modified,
       service("default", "kubernetes", kHubSpec, kWatchHead)},
      {"already pointing at the hub",
       service("default", "kubernetes", kHubSpec),
       {},
       Verdict::Keep,
       ""},
      {"IPv6 hub, custom port", service("default", "kubernetes", kSpec),
       [](ClusterView& v) {
         v.hub_host = "fd00::2:1";
         v.hub_port = 8443;
       },
       Verdict::Modified,
       service(
           "default", "kubernetes",
           R"({"ports":[{"name":"https","protocol":"TCP","port":8443,"targetPort":6443}],)"
           R"("clusterIP":"fd00::2:1","clusterIPs":["fd00::2:1"],"type":"ClusterIP",)"
           R"("sessionAffinity":"None","ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack"})")},
      {"only the https port moves, clusterIPs added",
       service("default", "kubernetes",
               R"({"ports":[{"name":"metrics","port":9090},{"name":"https","port":443}],)"
               R"("clusterIP":"10.96.0.1"})"),
       {},
       Verdict::Modified,
       service("default", "kubernetes",
               R"({"ports":[{"name":"metrics","port":9090},{"name":"https","port":10268}],)"
               R"("clusterIP":"169.254.2.1","clusterIPs":["169.254.2.1"]})")},
      {"ports not an array",
       service("default", "kubernetes", R"({"ports":7,"clusterIP":"x"})"),
       {},
       Verdict::Modified,
       service("default", "kubernetes",
               R"({"ports":7,"clusterIP":"169.254.2.1","clusterIPs":["169.254.2.1"]})")},
      {"odd port entries skipped",
       service("default", "kubernetes",
               R"({"ports":[1,{"name":5},{"name":"https"}],"clusterIP":"169.254.2.1",)"
               R"("clusterIPs":["169.254.2.1"]})"),
       {},
       Verdict::Modified,
       service("default", "kubernetes",
               R"({"ports":[1,{"name":5},{"name":"https","port":10268}],)"
               R"("clusterIP":"169.254.2.1","clusterIPs":["169.254.2.1"]})")},
      {"other Service", service("default", "web", kSpec), {}, Verdict::Keep, ""},
      {"kubernetes in another namespace",
       service("kube-system", "kubernetes", kSpec),
       {},
       Verdict::Keep,
       ""},
      {"spec missing",
       R"({"metadata":{"name":"kubernetes","namespace":"default"}})",
       {},
       Verdict::Keep,
       ""},
      {"spec not an object",
       service("default", "kubernetes", R"("ClusterIP")"),
       {},
       Verdict::Keep,
       ""},
      {"metadata not an object",
       R"({"metadata":"default/kubernetes","spec":{}})",
       {},
       Verdict::Keep,
       ""},
      {"name not a string",
       R"({"metadata":{"name":1,"namespace":"default"},"spec":{}})",
       {},
       Verdict::Keep,
       ""},
      {"not an object", R"(["default","kubernetes"])", {}, Verdict::Keep, ""},
  };
  test_support::run_apply_cases(*filter, cases);
}

TEST(MasterServiceFilter, ReadyOnceHubHostIsKnown) {
  test_support::expect_ready_only_with_hub_host(*make_master_service_filter(), "masterservice");
}

TEST(MasterServiceFilter, Handles) {
  auto filter = make_master_service_filter();
  test_support::expect_handles(
      *filter, {
                   {"GET", "/api/v1/services", true},
                   {"GET", "/api/v1/services?watch=true&resourceVersion=199", true},
                   {"GET", "/api/v1/watch/services", true},
                   {"GET", "/api/v1/namespaces/default/services", true},
                   {"GET", "/api/v1/namespaces/default/services/kubernetes", false},  // get
                   {"POST", "/api/v1/namespaces/default/services", false},
                   {"PATCH", "/api/v1/namespaces/default/services/kubernetes", false},
                   {"GET", "/api/v1/endpoints", false},
                   {"GET", "/apis/example.com/v1/services", false},
                   {"GET", "/api/v2/services", false},
                   {"GET", "/api/v1", false},  // discovery: not a resource request
                   {"GET", "/healthz", false},
               });
}

}  // namespace
}  // namespace yurthub::filters
