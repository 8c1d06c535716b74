// Tests for filters/discard_cloud_service.cc: LoadBalancer Services opted in with
// `svc.openyurt.io/discard: "true"` and the tunnel server's internal Service are dropped (and left
// untouched for the DELETED event); everything else, including odd shapes, is kept.
#include "filters/discard_cloud_service.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test/filters/filter_test_support.h"

namespace yurthub::filters {
namespace {

using test_support::ApplyCase;

// A Service shaped like the v1.26 fixtures, with the given annotations object and spec.type.
std::string service(const std::string& ns, const std::string& name, const std::string& annotations,
                    const std::string& type) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":")" + ns +
         R"(","resourceVersion":"199","annotations":)" + annotations +
         R"(},"spec":{"ports":[{"name":"http","protocol":"TCP","port":80,"targetPort":8080}],)"
         R"("selector":{"app":"web"},"clusterIP":"10.99.207.174","type":")" +
         type + R"("},"status":{"loadBalancer":{}}})";
}

const std::string kDiscard = R"({"svc.openyurt.io/discard":"true"})";

TEST(DiscardCloudServiceFilter, Apply) {
  auto filter = make_discard_cloud_service_filter();
  const std::vector<ApplyCase> cases = {
      {"LoadBalancer opted in",
       service("default", "lb", kDiscard, "LoadBalancer"),
       {},
       Verdict::Drop,
       ""},
      {"watch object opted in",
       R"({"kind":"Service","apiVersion":"v1",)" +
           service("default", "lb", kDiscard, "LoadBalancer").substr(1),
       {},
       Verdict::Drop,
       ""},
      {"tunnel server Service",
       service("kube-system", "x-tunnel-server-internal-svc", "{}", "ClusterIP"),
       {},
       Verdict::Drop,
       ""},
      {"tunnel server Service without spec",
       R"({"metadata":{"name":"x-tunnel-server-internal-svc","namespace":"kube-system"}})",
       {},
       Verdict::Drop,
       ""},
      {"LoadBalancer without the annotation",
       service("default", "lb", "{}", "LoadBalancer"),
       {},
       Verdict::Keep,
       ""},
      {"annotation false",
       service("default", "lb", R"({"svc.openyurt.io/discard":"false"})", "LoadBalancer"),
       {},
       Verdict::Keep,
       ""},
      {"annotation True (case matters)",
       service("default", "lb", R"({"svc.openyurt.io/discard":"True"})", "LoadBalancer"),
       {},
       Verdict::Keep,
       ""},
      {"pre-v1.5 skip-discard annotation is not a discard",
       service("default", "lb", R"({"openyurt.io/skip-discard":"false"})", "LoadBalancer"),
       {},
       Verdict::Keep,
       ""},
      {"NodePort opted in", service("default", "np", kDiscard, "NodePort"), {}, Verdict::Keep, ""},
      {"ClusterIP opted in",
       service("default", "web", kDiscard, "ClusterIP"),
       {},
       Verdict::Keep,
       ""},
      {"tunnel server name in another namespace",
       service("default", "x-tunnel-server-internal-svc", "{}", "ClusterIP"),
       {},
       Verdict::Keep,
       ""},
      {"annotation not a string",
       service("default", "lb", R"({"svc.openyurt.io/discard":true})", "LoadBalancer"),
       {},
       Verdict::Keep,
       ""},
      {"annotations not an object",
       service("default", "lb", R"("x")", "LoadBalancer"),
       {},
       Verdict::Keep,
       ""},
      {"spec missing",
       R"({"metadata":{"name":"lb","namespace":"default","annotations":)" + kDiscard + "}}",
       {},
       Verdict::Keep,
       ""},
      {"spec not an object",
       R"({"metadata":{"name":"lb","namespace":"default","annotations":)" + kDiscard +
           R"(},"spec":[]})",
       {},
       Verdict::Keep,
       ""},
      {"not an object", "null", {}, Verdict::Keep, ""},
  };
  test_support::run_apply_cases(*filter, cases);
}

TEST(DiscardCloudServiceFilter, AlwaysReady) {
  auto filter = make_discard_cloud_service_filter();
  EXPECT_TRUE(filter->ready(ClusterView{}));
  EXPECT_TRUE(filter->ready(test_support::base_view()));
  EXPECT_EQ(filter->name(), "discardcloudservice");
}

TEST(DiscardCloudServiceFilter, Handles) {
  auto filter = make_discard_cloud_service_filter();
  test_support::expect_handles(*filter,
                               {
                                   {"GET", "/api/v1/services", true},
                                   {"GET", "/api/v1/services?watch=1", true},
                                   {"GET", "/api/v1/namespaces/kube-system/services", true},
                                   {"GET", "/api/v1/namespaces/default/services/lb", false},
                                   {"DELETE", "/api/v1/namespaces/default/services/lb", false},
                                   {"GET", "/api/v1/pods", false},
                                   {"GET", "/apis/discovery.k8s.io/v1/endpointslices", false},
                               });
}

}  // namespace
}  // namespace yurthub::filters
