// Tests for base/metrics.cc: the exact Prometheus text (0.0.4) for counters, gauges and
// histograms, escaping, float formatting, the overflow series, and exact totals under
// concurrent updates from several threads.
#include "base/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

namespace yurthub::base {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    out.push_back(text.substr(start, nl - start));
  }
  EXPECT_EQ(start, text.size()) << "text must end with a newline";
  return out;
}

using Lines = std::vector<std::string>;

TEST(Metrics, CounterFamilyRendersSortedSeries) {
  MetricsRegistry registry;
  auto& requests = registry.counter("requests_total", "Requests answered.", {"verb", "code"});
  requests.with({"list", "200"}).inc();
  requests.with({"get", "200"}).inc(3);
  requests.with({"get", "404"}).inc();
  requests.with(std::vector<std::string>{"get", "200"}).inc();  // same series, other overload
  EXPECT_EQ(lines(registry.render()), (Lines{
                                          "# HELP requests_total Requests answered.",
                                          "# TYPE requests_total counter",
                                          "requests_total{verb=\"get\",code=\"200\"} 4",
                                          "requests_total{verb=\"get\",code=\"404\"} 1",
                                          "requests_total{verb=\"list\",code=\"200\"} 1",
                                      }));
}

TEST(Metrics, SeriesReferencesAreStable) {
  MetricsRegistry registry;
  auto& family = registry.counter("c_total", "C.", {"k"});
  Counter& first = family.with({"a"});
  for (int i = 0; i < 100; ++i) family.with({std::to_string(i)});  // rebalance the map
  EXPECT_EQ(&family.with({"a"}), &first);
  EXPECT_EQ(&family.with(std::vector<std::string>{"a"}), &first);
}

TEST(Metrics, GaugeWithoutLabelsStartsAtZero) {
  MetricsRegistry registry;
  auto& in_flight = registry.gauge("in_flight_requests", "Requests being served.", {});
  EXPECT_EQ(lines(registry.render()),
            (Lines{"# HELP in_flight_requests Requests being served.",
                   "# TYPE in_flight_requests gauge", "in_flight_requests 0"}));
  in_flight.with({}).set(5);
  in_flight.with({}).add(-7);
  EXPECT_EQ(lines(registry.render()).back(), "in_flight_requests -2");
}

TEST(Metrics, LabelledFamilyWithoutSeriesRendersHeaderOnly) {
  MetricsRegistry registry;
  registry.gauge("server_healthy", "Health.", {"server"});
  EXPECT_EQ(lines(registry.render()),
            (Lines{"# HELP server_healthy Health.", "# TYPE server_healthy gauge"}));
}

TEST(Metrics, HistogramRendersCumulativeBuckets) {
  MetricsRegistry registry;
  auto& latency =
      registry.histogram("request_duration_seconds", "Latency.", {"verb"}, {0.005, 0.1, 1, 2.5});
  Histogram& get = latency.with({"get"});
  get.observe(0.005);  // on a bound: counted in le="0.005" (upper bounds are inclusive)
  get.observe(0.05);
  get.observe(0.25);
  get.observe(2);
  get.observe(4);  // only in +Inf
  latency.with({"list"}).observe(0.001);
  EXPECT_EQ(get.cumulative_counts(), (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(get.count(), 5u);
  EXPECT_DOUBLE_EQ(get.sum(), 6.305);
  const Lines text = lines(registry.render());
  const Lines want = {
      "# HELP request_duration_seconds Latency.",
      "# TYPE request_duration_seconds histogram",
      "request_duration_seconds_bucket{verb=\"get\",le=\"0.005\"} 1",
      "request_duration_seconds_bucket{verb=\"get\",le=\"0.1\"} 2",
      "request_duration_seconds_bucket{verb=\"get\",le=\"1\"} 3",
      "request_duration_seconds_bucket{verb=\"get\",le=\"2.5\"} 4",
      "request_duration_seconds_bucket{verb=\"get\",le=\"+Inf\"} 5",
      "request_duration_seconds_sum{verb=\"get\"} 6.305",
      "request_duration_seconds_count{verb=\"get\"} 5",
      "request_duration_seconds_bucket{verb=\"list\",le=\"0.005\"} 1",
      "request_duration_seconds_bucket{verb=\"list\",le=\"0.1\"} 1",
      "request_duration_seconds_bucket{verb=\"list\",le=\"1\"} 1",
      "request_duration_seconds_bucket{verb=\"list\",le=\"2.5\"} 1",
      "request_duration_seconds_bucket{verb=\"list\",le=\"+Inf\"} 1",
      "request_duration_seconds_sum{verb=\"list\"} 0.001",
      "request_duration_seconds_count{verb=\"list\"} 1",
  };
  EXPECT_EQ(text, want);
}

TEST(Metrics, HistogramWithoutLabelsAndGoFloatFormatting) {
  MetricsRegistry registry;
  auto& h =
      registry.histogram("sizes", "Sizes.", {}, {0.00001, 0.0001, 100000, 1e6, 1.5e7, INFINITY});
  h.with({}).observe(2e6);
  h.with({}).observe(NAN);  // client_golang puts NaN in +Inf
  const Lines text = lines(registry.render());
  EXPECT_EQ(text, (Lines{
                      "# HELP sizes Sizes.",
                      "# TYPE sizes histogram",
                      "sizes_bucket{le=\"1e-05\"} 0",
                      "sizes_bucket{le=\"0.0001\"} 0",
                      "sizes_bucket{le=\"100000\"} 0",
                      "sizes_bucket{le=\"1e+06\"} 0",
                      "sizes_bucket{le=\"1.5e+07\"} 1",
                      "sizes_bucket{le=\"+Inf\"} 2",  // the explicit +Inf bound is not repeated
                      "sizes_sum NaN",
                      "sizes_count 2",
                  }));
}

TEST(Metrics, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(escape_label_value("plain"), "plain");
  EXPECT_EQ(escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  MetricsRegistry registry;
  auto& traffic =
      registry.counter("traffic", "Bytes \"sent\" to C:\\clients\nper agent.", {"client"});
  traffic.with({"kubectl/v1.26 \"x\"\n"}).inc(10);
  EXPECT_EQ(lines(registry.render()),
            (Lines{"# HELP traffic Bytes \"sent\" to C:\\\\clients\\nper agent.",
                   "# TYPE traffic counter", "traffic{client=\"kubectl/v1.26 \\\"x\\\"\\n\"} 10"}));
}

TEST(Metrics, OverflowSeriesCollectsLabelSetsBeyondTheLimit) {
  MetricsRegistry registry;
  auto& agents = registry.counter("agents_total", "By agent.", {"agent", "verb"}, 2);
  agents.with({"kubelet", "get"}).inc();
  agents.with({"kube-proxy", "watch"}).inc();
  agents.with({"evil-1", "get"}).inc();
  agents.with({"evil-2", "get"}).inc(2);
  Counter& overflow = agents.with({"evil-3", "list"});
  EXPECT_EQ(&overflow, &agents.with({"overflow", "overflow"}));
  agents.with({"kubelet", "get"}).inc();  // existing series still reachable
  EXPECT_EQ(lines(registry.render()),
            (Lines{"# HELP agents_total By agent.", "# TYPE agents_total counter",
                   "agents_total{agent=\"kube-proxy\",verb=\"watch\"} 1",
                   "agents_total{agent=\"kubelet\",verb=\"get\"} 2",
                   "agents_total{agent=\"overflow\",verb=\"overflow\"} 3"}));
}

TEST(Metrics, FamiliesRenderInRegistrationOrder) {
  MetricsRegistry registry;
  registry.gauge("b_gauge", "B.", {});
  registry.histogram("c_hist", "C.", {}, {1});
  registry.counter("a_total", "A.", {});
  const Lines text = lines(registry.render());
  ASSERT_EQ(text.size(), 3u + 6u + 3u);  // histogram: HELP, TYPE, 2 buckets, sum, count
  EXPECT_EQ(text[0], "# HELP b_gauge B.");
  EXPECT_EQ(text[3], "# HELP c_hist C.");
  EXPECT_EQ(text[6], "c_hist_bucket{le=\"+Inf\"} 0");
  EXPECT_EQ(text[9], "# HELP a_total A.");
  EXPECT_EQ(text[11], "a_total 0");
}

TEST(Metrics, ConcurrentUpdatesAddUpExactly) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20000;
  MetricsRegistry registry;
  auto& counter = registry.counter("ops_total", "Ops.", {"kind"});
  auto& gauge = registry.gauge("open", "Open.", {});
  auto& hist = registry.histogram("lat", "Lat.", {"kind"}, {0.5, 1.5});
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string own = "thread-" + std::to_string(t);
      for (int i = 0; i < kPerThread; ++i) {
        counter.with({"shared"}).inc();
        counter.with({own}).inc(2);
        gauge.with({}).add(1);
        hist.with({"shared"}).observe(i % 2 == 0 ? 1.0 : 2.0);
        gauge.with({}).add(-1);
        if (i % 5000 == 0) registry.render();  // scrapes race with updates
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(counter.with({"shared"}).value(), std::uint64_t{kThreads} * kPerThread);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(counter.with({"thread-" + std::to_string(t)}).value(), 2u * kPerThread);
  }
  EXPECT_EQ(gauge.with({}).value(), 0);
  const Histogram& h = hist.with({"shared"});
  EXPECT_EQ(h.count(), std::uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(h.sum(), 1.5 * kThreads * kPerThread);  // exact: all partial sums are integers
  EXPECT_EQ(h.cumulative_counts(),
            (std::vector<std::uint64_t>{0, kThreads * kPerThread / 2, kThreads * kPerThread}));
  const std::string text = registry.render();
  EXPECT_NE(text.find("ops_total{kind=\"shared\"} 160000\n"), std::string::npos);
  EXPECT_NE(text.find("lat_count{kind=\"shared\"} 160000\n"), std::string::npos);
  EXPECT_NE(text.find("lat_sum{kind=\"shared\"} 240000\n"), std::string::npos);
}

}  // namespace
}  // namespace yurthub::base

namespace yurthub::base {
namespace {

// Label values come from clients (User-Agent): each is cut to 128 bytes.
TEST(MetricsLabels, LongValuesAreCut) {
  MetricsRegistry registry;
  auto& family = registry.counter("test_total", "help", {"client"});
  family.with({std::string(5000, 'a')}).inc();
  family.with({std::string(200, 'a')}).inc();  // the same series once cut
  const std::string text = registry.render();
  EXPECT_NE(text.find("test_total{client=\"" + std::string(128, 'a') + "\"} 2"), std::string::npos)
      << text.substr(0, 400);
  EXPECT_EQ(text.find(std::string(129, 'a')), std::string::npos);
}

}  // namespace
}  // namespace yurthub::base
