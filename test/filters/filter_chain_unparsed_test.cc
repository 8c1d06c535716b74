// FilterChain with kubelet's pod filter, serviceenvupdater (filters/filter_chain.cc's
// pass_unparsed): objects no ready filter may_change() go on byte for byte without being parsed,
// counted as seen as a parsed object every filter keeps; the pods that set
// KUBERNETES_SERVICE_HOST/PORT are rewritten as before. Shown to be unparsed by malformed objects
// that are no parse failure without the names and are one with them, beside a filter that always
// parses, or in a reactive chain (which records what it sends).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "filters/client_view.h"
#include "filters/filter_chain.h"
#include "filters/service_env_updater.h"
#include "test/base/watch_events.h"
#include "test/filters/filter_test_support.h"

namespace yurthub::filters {
namespace {

// A pod as the apiserver sends it; `env` is its container's env JSON (empty: none).
std::string pod(const std::string& name, const std::string& env = "") {
  return R"({"metadata":{"name":")" + name +
         R"(","namespace":"default","annotations":{"note":"a KUBERNETES_SERVICE_ prefix"}},)"
         R"("spec":{"containers":[{"name":"app","image":"nginx:1.25")" +
         (env.empty() ? "" : R"(,"env":)" + env) + R"(}]},"status":{"phase":"Running"}})";
}

std::string service_env(const std::string& host, const std::string& port) {
  return R"([{"name":"KUBERNETES_SERVICE_HOST","value":")" + host +
         R"("},{"name":"LOG_LEVEL","value":"info"},{"name":"KUBERNETES_SERVICE_PORT","value":")" +
         port + R"("}])";
}
const std::string kApiserverEnv = service_env("10.0.0.1", "6443");
const std::string kHubEnv = service_env("169.254.2.1", "10268");  // test_support::base_view()

// Always may change (the default), never does.
class AlwaysParses final : public ObjectFilter {
 public:
  std::string_view name() const override { return "alwaysparses"; }
  bool handles(const kube::RequestInfo&) const override { return true; }
  bool ready(const ClusterView&) const override { return true; }
  Verdict apply(rapidjson::Value&, rapidjson::Document::AllocatorType&,
                const ClusterView&) const override {
    return Verdict::Keep;
  }
};

// Reactive, and claims no object could change: a reactive chain parses anyway.
class ReactiveNeverChanges final : public ObjectFilter {
 public:
  std::string_view name() const override { return "reactivenever"; }
  bool handles(const kube::RequestInfo&) const override { return true; }
  bool ready(const ClusterView&) const override { return true; }
  bool reactive() const override { return true; }
  bool may_change(std::string_view) const override { return false; }
  Verdict apply(rapidjson::Value&, rapidjson::Document::AllocatorType&,
                const ClusterView&) const override {
    return Verdict::Keep;
  }
};

class FilterChainUnparsedTest : public ::testing::Test {
 protected:
  std::unique_ptr<FilterChain> chain(FilterChain::Shape shape,
                                     std::vector<const ObjectFilter*> filters = {},
                                     std::shared_ptr<ClientView> client_view = nullptr) {
    if (filters.empty()) filters = {env_updater_.get()};
    return std::make_unique<FilterChain>(
        shape, std::move(filters), [this] { return view_; }, metrics_, std::move(client_view));
  }
  static std::string body(FilterChain& c, std::string_view in, std::size_t step = 1 << 20) {
    std::string out;
    for (std::size_t at = 0; at < in.size(); at += step) {
      EXPECT_NE(c.feed(in.substr(at, step), &out), hub::FilterStatus::Cut);
    }
    EXPECT_EQ(c.finish(&out), hub::FilterStatus::Send);
    return out;
  }
  static std::string watch(FilterChain& c, std::string_view stream) {
    std::string out;
    EXPECT_TRUE(yurthub::test_support::for_each_watch_event(
        stream, 1 << 20,
        [&](std::string_view raw) { EXPECT_EQ(c.event(raw, &out), hub::FilterStatus::Send); }));
    return out;
  }
  std::uint64_t count(std::string_view filter, std::string_view result) {
    return metrics_.objects.with({std::string(filter), std::string(result)}).value();
  }
  std::uint64_t parse_failures(std::string_view filter = "serviceenvupdater") {
    return metrics_.parse_failures.with({std::string(filter)}).value();
  }

  base::MetricsRegistry registry_;
  FilterMetrics metrics_{registry_};
  std::shared_ptr<const ClusterView> view_ =
      std::make_shared<ClusterView>(test_support::base_view());
  std::unique_ptr<ObjectFilter> env_updater_ = make_service_env_updater_filter();
};

TEST_F(FilterChainUnparsedTest, PodListRewritesOnlyThePodsThatSetTheNames) {
  // p1 has a space a re-serialization would drop; p4's look-alike name is parsed, then kept.
  const std::string p1 = R"({"metadata": {"name":"p1"},"spec":{"containers":[]}})";
  const std::string p3 = pod("p3", R"([{"name":"LOG_LEVEL","value":"info"}])");
  const std::string p4 = pod("p4", R"([{"name":"KUBERNETES_SERVICE_PORT_HTTPS","value":"443"}])");
  const std::string head = R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":[)";
  const std::string in = head + p1 + "," + pod("p2", kApiserverEnv) + "," + p3 + "," + p4 + "]}";
  const std::string expected = head + p1 + "," + pod("p2", kHubEnv) + "," + p3 + "," + p4 + "]}";
  for (std::size_t step : {std::size_t{1}, std::size_t{61}, in.size()}) {
    auto c = chain(FilterChain::Shape::List);
    EXPECT_EQ(body(*c, in, step), expected) << "step " << step;
  }
  // As before: each of the 4 pods seen by the ready filter, 1 modified, 3 runs.
  EXPECT_EQ(count("serviceenvupdater", "seen"), 12u);
  EXPECT_EQ(count("serviceenvupdater", "modified"), 3u);
  EXPECT_EQ(parse_failures(), 0u);
}

TEST_F(FilterChainUnparsedTest, WatchAndGetRewriteOnlyThePodsThatSetTheNames) {
  const std::string in =
      R"({"type":"ADDED","object":)" + pod("p1") + "}\n" + R"({"type":"MODIFIED","object":)" +
      pod("p2", kApiserverEnv) + "}\n" + R"({"type":"DELETED","object":)" + pod("p3") + "}\n" +
      R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})" + "\n";
  std::string expected = in;
  expected.replace(expected.find(kApiserverEnv), kApiserverEnv.size(), kHubEnv);
  EXPECT_EQ(watch(*chain(FilterChain::Shape::Watch), in), expected);
  // As before: the three pods seen, the bookmark not.
  EXPECT_EQ(count("serviceenvupdater", "seen"), 3u);
  EXPECT_EQ(count("serviceenvupdater", "modified"), 1u);

  EXPECT_EQ(body(*chain(FilterChain::Shape::Object), pod("p1"), 7), pod("p1"));
  EXPECT_EQ(body(*chain(FilterChain::Shape::Object), pod("p2", kApiserverEnv), 7),
            pod("p2", kHubEnv));
  EXPECT_EQ(count("serviceenvupdater", "seen"), 5u);
  EXPECT_EQ(count("serviceenvupdater", "modified"), 2u);
  EXPECT_EQ(parse_failures(), 0u);
}

TEST_F(FilterChainUnparsedTest, AMalformedObjectWithoutTheNamesIsNotParsed) {
  EXPECT_EQ(body(*chain(FilterChain::Shape::Object), "{not json"), "{not json");
  EXPECT_EQ(parse_failures(), 0u);
  EXPECT_EQ(count("serviceenvupdater", "seen"), 1u);
  EXPECT_EQ(body(*chain(FilterChain::Shape::Object), "{not json KUBERNETES_SERVICE_HOST"),
            "{not json KUBERNETES_SERVICE_HOST");
  EXPECT_EQ(parse_failures(), 1u);
  EXPECT_EQ(count("serviceenvupdater", "seen"), 1u);

  // A list item or a watch event's object that is not an object.
  EXPECT_EQ(body(*chain(FilterChain::Shape::List), R"({"items":["a pod",3]})"),
            R"({"items":["a pod",3]})");
  EXPECT_EQ(parse_failures(), 1u);
  EXPECT_EQ(body(*chain(FilterChain::Shape::List), R"({"items":["KUBERNETES_SERVICE_PORT"]})"),
            R"({"items":["KUBERNETES_SERVICE_PORT"]})");
  EXPECT_EQ(parse_failures(), 2u);
  const std::string events = R"({"type":"ADDED","object":"a pod"})"
                             "\n";
  EXPECT_EQ(watch(*chain(FilterChain::Shape::Watch), events), events);
  EXPECT_EQ(parse_failures(), 2u);
  const std::string named = R"({"type":"ADDED","object":"KUBERNETES_SERVICE_HOST"})"
                            "\n";
  EXPECT_EQ(watch(*chain(FilterChain::Shape::Watch), named), named);
  EXPECT_EQ(parse_failures(), 3u);
}

TEST_F(FilterChainUnparsedTest, EveryReadyFilterMustAgree) {
  // Beside a filter that may change anything, the object is parsed: a failure for both.
  AlwaysParses always;
  EXPECT_EQ(body(*chain(FilterChain::Shape::Object, {env_updater_.get(), &always}), "{not json"),
            "{not json");
  EXPECT_EQ(parse_failures("serviceenvupdater"), 1u);
  EXPECT_EQ(parse_failures("alwaysparses"), 1u);

  // A filter that is not ready changes nothing, as before: the pod goes on unparsed, unseen.
  auto no_hub = std::make_shared<ClusterView>(*view_);
  no_hub->hub_host.clear();
  view_ = no_hub;
  const std::string named = pod("p2", kApiserverEnv) + "{";  // not JSON
  EXPECT_EQ(body(*chain(FilterChain::Shape::Object), named), named);
  EXPECT_EQ(parse_failures("serviceenvupdater"), 1u);
  EXPECT_EQ(count("serviceenvupdater", "seen"), 0u);
}

TEST_F(FilterChainUnparsedTest, AReactiveChainParsesWhatItRecords) {
  auto budget = std::make_shared<ClientView::Budget>();
  budget->limit = SIZE_MAX;
  auto client = std::make_shared<ClientView>(budget);
  ReactiveNeverChanges never;
  const std::string list = R"({"items":[)" + pod("p1") + "," + pod("p3") + "]}";
  EXPECT_EQ(body(*chain(FilterChain::Shape::List, {&never}, client), list), list);
  int recorded = 0;
  auto next_view = std::make_shared<ClusterView>(*view_);
  EXPECT_TRUE(client->for_each_stale(next_view, [&](ClientView::Entry&) { ++recorded; }));
  EXPECT_EQ(recorded, 2);
}

}  // namespace
}  // namespace yurthub::filters
