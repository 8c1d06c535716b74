// RequestSeries: what it counts must be what looking each series up by label on every request
// counts (as ProxySession::record did before the per-worker map), for repeated and distinct kinds
// of request, and past the map's bound.
#include "hub/request_series.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace yurthub::hub {
namespace {

struct Request {
  kube::Verb verb;
  std::string resource;
  std::string subresource;
  std::string user_agent;
  unsigned status;
  std::uint64_t bytes;
  std::optional<double> seconds;
};

kube::RequestInfo info_of(const Request& r) {
  kube::RequestInfo info;
  info.verb = r.verb;
  info.resource = r.resource;
  info.subresource = r.subresource;
  info.user_agent = r.user_agent;
  info.component = r.user_agent.substr(0, r.user_agent.find('/'));
  return info;
}

// The reference: every series found by its labels.
void count_by_label(HubMetrics& m, const Request& r) {
  const kube::RequestInfo info = info_of(r);
  const std::string code = r.status ? std::to_string(r.status) : "0";
  m.requests.with({kube::verb_name(info.verb), info.resource, info.component, code}).inc();
  if (r.seconds)
    m.request_duration.with({kube::verb_name(info.verb), info.resource}).observe(*r.seconds);
  if (r.bytes)
    m.traffic.with({info.user_agent, kube::verb_name(info.verb), info.resource, info.subresource})
        .inc(r.bytes);
}

void count_through(RequestSeries& series, const Request& r) {
  std::optional<std::chrono::duration<double>> elapsed;
  if (r.seconds) elapsed = std::chrono::duration<double>(*r.seconds);
  series.count(info_of(r), r.status, r.bytes, elapsed);
}

struct Both {
  base::MetricsRegistry expected_registry, actual_registry;
  HubMetrics expected{expected_registry}, actual{actual_registry};
  RequestSeries series{actual};

  void count(const Request& r) {
    count_by_label(expected, r);
    count_through(series, r);
  }
};

TEST(RequestSeries, CountsWhatLookingUpEachSeriesByLabelCounts) {
  Both both;
  const std::string kubelet = "kubelet/v1.26.0 (linux/amd64) kubernetes/abc";
  const std::vector<Request> requests = {
      {kube::Verb::Get, "pods", "", kubelet, 200, 812, 0.002},
      {kube::Verb::Get, "pods", "", kubelet, 200, 790, 0.004},           // the same kind again
      {kube::Verb::Get, "pods", "", kubelet, 404, 150, 0.001},           // another code
      {kube::Verb::Get, "pods", "", "kubelet/v1.27.0", 200, 10, 0.003},  // another User-Agent
      {kube::Verb::Patch, "pods", "status", kubelet, 200, 900, 0.01},
      {kube::Verb::Patch, "pods", "", kubelet, 200, 900, 0.01},                  // no subresource
      {kube::Verb::Watch, "pods", "", kubelet, 200, 5000, std::nullopt},         // long-running
      {kube::Verb::Get, "nodes", "", "kube-proxy/v1.26.0", 0, 0, std::nullopt},  // no answer
      {kube::Verb::List, "services", "", "", 200, 0, 0.02},  // no User-Agent, no body
      {kube::Verb::List, "services", "", "", 200, 64, 0.02},
  };
  for (int round = 0; round < 3; ++round)
    for (const Request& r : requests) both.count(r);
  EXPECT_EQ(both.actual_registry.render(), both.expected_registry.render());
  // 10 requests; the second, the third (another code only) and the last repeat a kind.
  EXPECT_EQ(both.series.kinds(), 7u);
}

TEST(RequestSeries, StaysBoundedAndCountsRightPastItsBound) {
  Both both;
  for (std::size_t i = 0; i < RequestSeries::kMaxKinds + 10; ++i)
    both.count(
        {kube::Verb::Get, "configmaps", "", "client-" + std::to_string(i) + "/1.0", 200, i, 0.001});
  EXPECT_LE(both.series.kinds(), RequestSeries::kMaxKinds);
  both.count({kube::Verb::Get, "configmaps", "", "client-0/1.0", 200, 1, 0.001});
  EXPECT_EQ(both.actual_registry.render(), both.expected_registry.render());
}

// A request in flight keeps its kind past the bound (its answer is counted through it), and the
// in-flight gauge of its kind goes up while it is served, for resource requests only.
TEST(RequestSeries, AKindInUseOutlivesTheBoundAndCountsInFlight) {
  Both both;
  const std::string gauge =
      R"(node_yurthub_in_flight_requests_collector{verb="watch",resource="pods",subresources="",)"
      R"(client="kubelet/v1.26.0"} )";
  const Request watch{kube::Verb::Watch, "pods", "", "kubelet/v1.26.0", 200, 10, std::nullopt};
  kube::RequestInfo info = info_of(watch);
  info.is_resource_request = true;
  {
    RequestSeries::Use use = both.series.begin(info);
    EXPECT_NE(both.actual_registry.render().find(gauge + "1\n"), std::string::npos);
    for (std::size_t i = 0; i < RequestSeries::kMaxKinds + 10; ++i)
      both.count({kube::Verb::Get, "configmaps", "", "c-" + std::to_string(i), 200, 1, 0.001});
    count_by_label(both.expected, watch);
    both.series.count(info, watch.status, watch.bytes, std::nullopt, &use.kind());
  }
  const std::string text = both.actual_registry.render();
  EXPECT_NE(text.find(gauge + "0\n"), std::string::npos) << text;
  both.expected.in_flight_requests.with(
      {"watch", "pods", "", "kubelet/v1.26.0"});  // 0, as rendered
  EXPECT_EQ(text, both.expected_registry.render());

  kube::RequestInfo version;
  version.verb = kube::Verb::Get;
  version.path = "/version";
  { RequestSeries::Use use = both.series.begin(version); }
  EXPECT_EQ(both.actual_registry.render(), text);  // no series for a non-resource request
}

}  // namespace
}  // namespace yurthub::hub
