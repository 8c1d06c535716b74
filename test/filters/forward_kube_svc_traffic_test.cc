// Tests for filters/forward_kube_svc_traffic.cc: the kubernetes Service's EndpointSlice gets the
// hub as its only endpoint and the hub port on "https", for IPv4 and IPv6 hubs of the slice's
// family; other slices, other families and odd shapes pass unchanged; ready() and handles()
// (v1 only).
#include "filters/forward_kube_svc_traffic.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test/filters/filter_test_support.h"

namespace yurthub::filters {
namespace {

using test_support::ApplyCase;

// The EndpointSlice the apiserver keeps for default/kubernetes (v1.26), with the given
// namespace, service-name label (empty: none), addressType, endpoints and ports.
std::string slice(const std::string& ns, const std::string& service,
                  const std::string& address_type, const std::string& endpoints,
                  const std::string& ports, const std::string& head = "") {
  std::string labels =
      service.empty() ? "{}" : R"({"kubernetes.io/service-name":")" + service + "\"}";
  return "{" + head + R"("metadata":{"name":"kubernetes","namespace":")" + ns +
         R"(","resourceVersion":"190","generation":1,"labels":)" + labels + R"(},"addressType":)" +
         address_type + R"(,"endpoints":)" + endpoints + R"(,"ports":)" + ports + "}";
}

const std::string kIPv4 = R"("IPv4")";
const std::string kApiserver = R"([{"addresses":["172.18.0.2"],"conditions":{"ready":true}},)"
                               R"({"addresses":["172.18.0.3"],"conditions":{"ready":false}}])";
const std::string kPorts = R"([{"name":"https","protocol":"TCP","port":6443}])";
const std::string kHub = R"([{"addresses":["169.254.2.1"],"conditions":{"ready":true}}])";
const std::string kHubPorts = R"([{"name":"https","protocol":"TCP","port":10268}])";

std::string kube(const std::string& endpoints, const std::string& ports) {
  return slice("default", "kubernetes", kIPv4, endpoints, ports);
}

TEST(ForwardKubeSvcTrafficFilter, Apply) {
  auto filter = make_forward_kube_svc_traffic_filter();
  auto ipv6_hub = [](ClusterView& v) { v.hub_host = "fd00::2:1"; };
  const std::string kHead = R"("kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1",)";
  const std::vector<ApplyCase> cases = {
      {"apiserver endpoints replaced by the hub",
       kube(kApiserver, kPorts),
       {},
       Verdict::Modified,
       kube(kHub, kHubPorts)},
      {"watch object",
       slice("default", "kubernetes", kIPv4, kApiserver, kPorts, kHead),
       {},
       Verdict::Modified,
       slice("default", "kubernetes", kIPv4, kHub, kHubPorts, kHead)},
      {"already pointing at the hub", kube(kHub, kHubPorts), {}, Verdict::Keep, ""},
      {"IPv6 hub, IPv6 slice",
       slice("default", "kubernetes", R"("IPv6")",
             R"([{"addresses":["fd00::10"],"conditions":{"ready":true}}])", kPorts),
       ipv6_hub, Verdict::Modified,
       slice("default", "kubernetes", R"("IPv6")",
             R"([{"addresses":["fd00::2:1"],"conditions":{"ready":true}}])", kHubPorts)},
      {"IPv6 hub, IPv4 slice", kube(kApiserver, kPorts), ipv6_hub, Verdict::Keep, ""},
      {"IPv4 hub, IPv6 slice",
       slice("default", "kubernetes", R"("IPv6")", "[]", kPorts),
       {},
       Verdict::Keep,
       ""},
      {"FQDN slice",
       slice("default", "kubernetes", R"("FQDN")", kApiserver, kPorts),
       {},
       Verdict::Keep,
       ""},
      {"addressType not a string",
       slice("default", "kubernetes", "4", kApiserver, kPorts),
       {},
       Verdict::Keep,
       ""},
      {"endpoints null", kube("null", kPorts), {}, Verdict::Modified, kube(kHub, kHubPorts)},
      {"endpoints not an array",
       kube(R"("x")", kPorts),
       {},
       Verdict::Modified,
       kube(kHub, kHubPorts)},
      {"custom hub port, only the first https port, others untouched",
       kube(kApiserver, R"([{"name":"metrics","port":9090},{"name":"https","port":6443},)"
                        R"({"name":"https","port":6444}])"),
       [](ClusterView& v) { v.hub_port = 8443; }, Verdict::Modified,
       kube(kHub, R"([{"name":"metrics","port":9090},{"name":"https","port":8443},)"
                  R"({"name":"https","port":6444}])")},
      {"ports not an array", kube(kApiserver, "{}"), {}, Verdict::Modified, kube(kHub, "{}")},
      {"other Service's slice",
       slice("default", "web", kIPv4, kApiserver, kPorts),
       {},
       Verdict::Keep,
       ""},
      {"no service-name label",
       slice("default", "", kIPv4, kApiserver, kPorts),
       {},
       Verdict::Keep,
       ""},
      {"kubernetes label in another namespace",
       slice("kube-system", "kubernetes", kIPv4, kApiserver, kPorts),
       {},
       Verdict::Keep,
       ""},
      {"metadata missing", R"({"addressType":"IPv4","endpoints":[]})", {}, Verdict::Keep, ""},
      {"not an object", "[]", {}, Verdict::Keep, ""},
  };
  test_support::run_apply_cases(*filter, cases);
}

TEST(ForwardKubeSvcTrafficFilter, ReadyOnceHubHostIsKnown) {
  test_support::expect_ready_only_with_hub_host(*make_forward_kube_svc_traffic_filter(),
                                                "forwardkubesvctraffic");
}

TEST(ForwardKubeSvcTrafficFilter, Handles) {
  auto filter = make_forward_kube_svc_traffic_filter();
  test_support::expect_handles(
      *filter,
      {
          {"GET", "/apis/discovery.k8s.io/v1/endpointslices", true},
          {"GET", "/apis/discovery.k8s.io/v1/endpointslices?watch=true", true},
          {"GET", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", true},
          {"GET", "/apis/discovery.k8s.io/v1beta1/endpointslices", false},
          {"GET", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes", false},
          {"GET", "/api/v1/endpoints", false},
          {"GET", "/api/v1/services", false},
      });
}

}  // namespace
}  // namespace yurthub::filters
