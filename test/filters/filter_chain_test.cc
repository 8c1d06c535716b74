// FilterChain: framing of gets, lists and watches around stand-in filters, drop -> DELETED,
// pass-through of what cannot be parsed, and corrections of a client's objects when the
// ClusterView changes (ClientView shared by the client's list and watches).
#include "filters/filter_chain.h"

#include <gtest/gtest.h>

#include "filters/client_view.h"
#include "test/base/watch_events.h"
#include "test/filters/filter_test_support.h"

namespace yurthub::filters {
namespace {

std::shared_ptr<ClientView::Budget> unbounded_budget() {
  auto budget = std::make_shared<ClientView::Budget>();
  budget->limit = SIZE_MAX;
  return budget;
}

using test_support::parse_json;
using enum hub::FilterStatus;
using test_support::to_json;

std::string name_of(const rapidjson::Value& o) { return o["metadata"]["name"].GetString(); }

// Drops objects named "drop-*", labels objects named "mod-*".
class StandIn final : public ObjectFilter {
 public:
  std::string_view name() const override { return "standin"; }
  bool handles(const kube::RequestInfo&) const override { return true; }
  bool ready(const ClusterView& view) const override { return view.node_synced; }
  Verdict apply(rapidjson::Value& o, rapidjson::Document::AllocatorType& a,
                const ClusterView&) const override {
    const std::string name = name_of(o);
    if (name.starts_with("drop-")) return Verdict::Drop;
    if (!name.starts_with("mod-")) return Verdict::Keep;
    o["metadata"].AddMember("labels", rapidjson::Value(rapidjson::kObjectType), a);
    o["metadata"]["labels"].AddMember("filtered", "yes", a);
    return Verdict::Modified;
  }
};

// Reactive: keeps only the `endpoints` whose node is in the pool (like servicetopology); drops
// objects when the pool is "hidden".
class PoolOnly final : public ObjectFilter {
 public:
  std::string_view name() const override { return "poolonly"; }
  bool handles(const kube::RequestInfo&) const override { return true; }
  bool ready(const ClusterView&) const override { return true; }
  bool reactive() const override { return true; }
  Verdict apply(rapidjson::Value& o, rapidjson::Document::AllocatorType&,
                const ClusterView& view) const override {
    if (view.pool_name == "hidden") return Verdict::Drop;
    auto& eps = o["endpoints"];
    const auto before = eps.Size();
    for (auto it = eps.Begin(); it != eps.End();) {
      if (view.pool_nodes.count(it->GetString()) == 0)
        it = eps.Erase(it);
      else
        ++it;
    }
    return eps.Size() == before ? Verdict::Keep : Verdict::Modified;
  }
};

class FilterChainTest : public ::testing::Test {
 protected:
  FilterChainTest() {
    auto v = std::make_shared<ClusterView>();
    v->node_synced = true;
    v->pool_name = "pool-a";
    v->pool_nodes = {"n1", "n2"};
    view_ = v;
  }
  std::unique_ptr<FilterChain> chain(FilterChain::Shape shape, const ObjectFilter& f,
                                     const std::shared_ptr<ClientView>& cv = nullptr,
                                     bool first_page = true) {
    return std::make_unique<FilterChain>(
        shape, std::vector<const ObjectFilter*>{&f}, [this] { return view_; }, metrics_, cv,
        first_page);
  }
  // Feeds `body` in pieces of `step` bytes, then finishes.
  static std::string run(FilterChain& c, std::string_view body, std::size_t step = 1 << 20) {
    std::string out;
    for (std::size_t i = 0; i < body.size(); i += step) {
      EXPECT_NE(c.feed(body.substr(i, step), &out), hub::FilterStatus::Cut);
    }
    EXPECT_EQ(c.finish(&out), hub::FilterStatus::Send);
    return out;
  }
  // Feeds a watch stream in pieces of `step` bytes, framed into events as the hub does.
  static std::string watch(FilterChain& c, std::string_view stream, std::size_t step = 1 << 20) {
    std::string out;
    EXPECT_TRUE(yurthub::test_support::for_each_watch_event(
        stream, step, [&](std::string_view raw) { EXPECT_EQ(c.event(raw, &out), Send); }));
    EXPECT_EQ(c.finish(&out), Send);
    return out;
  }
  void set_pool_nodes(std::set<std::string> nodes, std::string pool = "pool-a") {
    auto v = std::make_shared<ClusterView>(*view_);
    v->pool_nodes = std::move(nodes);
    v->pool_name = std::move(pool);
    view_ = v;
  }

  base::MetricsRegistry registry_;
  FilterMetrics metrics_{registry_};
  std::shared_ptr<const ClusterView> view_;
  StandIn standin_;
  PoolOnly pool_only_;
};

constexpr std::string_view kList =
    R"({"kind":"ServiceList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[)"
    R"({"metadata":{"name":"a","namespace":"x"}},{"metadata":{"name":"drop-b"}},)"
    R"({"metadata":{"name":"mod-c"}},{"metadata":{"name":"drop-d"}}]})";

TEST_F(FilterChainTest, ListDropsAndModifiesItemsAndKeepsTheRestByteForByte) {
  const std::string expected =
      R"({"kind":"ServiceList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[)"
      R"({"metadata":{"name":"a","namespace":"x"}},{"metadata":{"name":"mod-c","labels":{"filtered":"yes"}}}]})";
  for (std::size_t step : {std::size_t{1}, std::size_t{7}, kList.size()}) {
    auto c = chain(FilterChain::Shape::List, standin_);
    EXPECT_EQ(run(*c, kList, step), expected) << "step " << step;
  }
  EXPECT_EQ(metrics_.objects.with({"standin", "dropped"}).value(), 6u);
  EXPECT_EQ(metrics_.objects.with({"standin", "modified"}).value(), 3u);
}

// Writes down what a list's echo is told, one line per call.
class EchoLog final : public base::ListSink {
 public:
  void member(std::string_view key, std::string_view raw) override {
    log += std::string(key) + "=" + std::string(raw) + "\n";
  }
  void items_begin() override { log += "[\n"; }
  void item(std::string_view raw) override { log += std::string(raw) + "\n"; }
  void items_end() override { log += "]\n"; }
  void end() override { log += "end\n"; }
  std::string log;
};

TEST_F(FilterChainTest, AListsEchoIsToldTheMembersAndItemsTheClientGets) {
  const std::string expected =
      "kind=\"ServiceList\"\napiVersion=\"v1\"\nmetadata={\"resourceVersion\":\"7\"}\n[\n"
      R"({"metadata":{"name":"a","namespace":"x"}})"
      "\n"
      R"({"metadata":{"name":"mod-c","labels":{"filtered":"yes"}}})"
      "\n]\nend\n";
  for (std::size_t step : {std::size_t{1}, std::size_t{7}, kList.size()}) {
    auto c = chain(FilterChain::Shape::List, standin_);
    EchoLog echo;
    ASSERT_TRUE(c->echo_list(&echo));
    run(*c, kList, step);
    EXPECT_EQ(echo.log, expected) << "step " << step;
  }
  // "items":null is an empty list for the echo too, as for the client.
  auto c = chain(FilterChain::Shape::List, standin_);
  EchoLog echo;
  ASSERT_TRUE(c->echo_list(&echo));
  EXPECT_EQ(run(*c, R"({"items":null})"), R"({"items":[]})");
  EXPECT_EQ(echo.log, "[\n]\nend\n");
  // Only a list is framed into members and items.
  EXPECT_FALSE(chain(FilterChain::Shape::Object, standin_)->echo_list(&echo));
  EXPECT_FALSE(chain(FilterChain::Shape::Watch, standin_)->echo_list(&echo));
}

TEST_F(FilterChainTest, EmptyAndNullItemsStayValidLists) {
  auto c = chain(FilterChain::Shape::List, standin_);
  EXPECT_EQ(run(*c, R"({"kind":"L","items":[{"metadata":{"name":"drop-x"}}]})"),
            R"({"kind":"L","items":[]})");
  auto d = chain(FilterChain::Shape::List, standin_);
  EXPECT_EQ(run(*d, R"({"items":null,"metadata":{}})"), R"({"items":[],"metadata":{}})");
}

TEST_F(FilterChainTest, NotReadyFilterPassesEverythingThrough) {
  auto v = std::make_shared<ClusterView>(*view_);
  v->node_synced = false;
  view_ = v;
  auto c = chain(FilterChain::Shape::List, standin_);
  EXPECT_EQ(run(*c, kList), kList);
}

TEST_F(FilterChainTest, MalformedListIsAnErrorUnparseableItemPassesThrough) {
  auto c = chain(FilterChain::Shape::List, standin_);
  std::string out;
  EXPECT_EQ(c->feed(R"({"items":[{"metadata":{"name":"a"}},{"bad" 1}]})", &out), Cut);
  EXPECT_FALSE(c->cut_reason().empty());
  EXPECT_EQ(metrics_.framing_failures.with({}).value(), 1u);
  auto d = chain(FilterChain::Shape::List, standin_);
  EXPECT_EQ(run(*d, R"({"items":["just a string",{"metadata":{"name":"drop-x"}}]})"),
            R"({"items":["just a string"]})");
  EXPECT_EQ(metrics_.parse_failures.with({"standin"}).value(), 1u);
  auto e = chain(FilterChain::Shape::List, standin_);
  out.clear();
  ASSERT_EQ(e->feed(R"({"items":[)", &out), Send);  // the list's opening goes out
  EXPECT_EQ(e->finish(&out), Cut);                  // the body ended inside the list
}

TEST_F(FilterChainTest, WatchEventsAreFilteredAndDropsBecomeDeleted) {
  const std::string in =
      R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})"
      "\n"
      R"({"type":"MODIFIED","object":{"metadata":{"name":"mod-b"}}})"
      "\n"
      R"({"type":"ADDED","object":{"metadata":{"name":"drop-c"},"spec":{"x":1}}})"
      "\n"
      R"({"type":"DELETED","object":{"metadata":{"name":"drop-c"}}})"
      "\n"
      R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})"
      "\n"
      R"({"type":"ERROR","object":{"kind":"Status","code":410}})"
      "\n";
  const std::string expected =
      R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})"
      "\n"
      R"({"type":"MODIFIED","object":{"metadata":{"name":"mod-b","labels":{"filtered":"yes"}}}})"
      "\n"
      R"({"type":"DELETED","object":{"metadata":{"name":"drop-c"},"spec":{"x":1}}})"
      "\n"
      R"({"type":"DELETED","object":{"metadata":{"name":"drop-c"}}})"
      "\n"
      R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})"
      "\n"
      R"({"type":"ERROR","object":{"kind":"Status","code":410}})"
      "\n";
  for (std::size_t step : {std::size_t{1}, std::size_t{13}, in.size()}) {
    auto c = chain(FilterChain::Shape::Watch, standin_);
    EXPECT_EQ(watch(*c, in, step), expected) << "step " << step;
  }
}

TEST_F(FilterChainTest, AWatchIsFedByEventAndAnUnreadableEventPassesAsSent) {
  // The hub frames a watch (hub/body_transform.cc); bytes fed to a watch's chain are refused, and
  // a stream the hub cannot frame is counted here.
  auto c = chain(FilterChain::Shape::Watch, standin_);
  std::string out;
  EXPECT_EQ(c->feed(R"({"type":"ADDED","object":{}})", &out), Cut);
  c->unframeable("malformed JSON");
  EXPECT_EQ(metrics_.framing_failures.with({}).value(), 1u);
  auto d = chain(FilterChain::Shape::Watch, standin_);
  EXPECT_EQ(watch(*d, R"({"type":"ADDED","object":"not an object"})"
                      "\n"),
            R"({"type":"ADDED","object":"not an object"})"
            "\n");
  EXPECT_EQ(metrics_.parse_failures.with({"standin"}).value(), 1u);
}

TEST_F(FilterChainTest, GetIsFilteredWholeAndUnparseableBodiesPassUnchanged) {
  auto c = chain(FilterChain::Shape::Object, standin_);
  EXPECT_EQ(run(*c, R"({"metadata":{"name":"mod-x"}})", 3),
            R"({"metadata":{"name":"mod-x","labels":{"filtered":"yes"}}})");
  auto d = chain(FilterChain::Shape::Object, standin_);
  EXPECT_EQ(run(*d, R"({"metadata":{"name":"drop-x"}})"), R"({"metadata":{"name":"drop-x"}})");
  auto e = chain(FilterChain::Shape::Object, standin_);
  EXPECT_EQ(run(*e, "{not json"), "{not json");  // The object is held until the body is complete:
                                                 // nothing goes out before finish().
  auto f = chain(FilterChain::Shape::Object, standin_);
  std::string out;
  EXPECT_EQ(f->feed(R"({"metadata":)", &out), Hold);
  EXPECT_EQ(f->feed(R"({"name":"mod-y"}})", &out), Hold);
  EXPECT_EQ(out, "");
  EXPECT_EQ(f->finish(&out), Send);
  EXPECT_EQ(out, R"({"metadata":{"name":"mod-y","labels":{"filtered":"yes"}}})");
}

constexpr std::string_view kSlices =
    R"({"kind":"EndpointSliceList","items":[)"
    R"({"metadata":{"name":"s1","namespace":"d"},"endpoints":["n1","n3"]},)"
    R"({"metadata":{"name":"s2","namespace":"d"},"endpoints":["n2"]}]})";

TEST_F(FilterChainTest, CorrectionsCoverTheListAndEveryWatchOfTheClient) {
  auto client = std::make_shared<ClientView>(unbounded_budget());
  auto list = chain(FilterChain::Shape::List, pool_only_, client);
  EXPECT_EQ(run(*list, kSlices),
            R"({"kind":"EndpointSliceList","items":[)"
            R"({"metadata":{"name":"s1","namespace":"d"},"endpoints":["n1"]},)"
            R"({"metadata":{"name":"s2","namespace":"d"},"endpoints":["n2"]}]})");
  auto watch = chain(FilterChain::Shape::Watch, pool_only_, client);
  ASSERT_TRUE(watch->reactive());
  std::string out;
  EXPECT_EQ(watch->correct(&out), Hold);
  EXPECT_EQ(out, "") << "nothing changed since the list";

  set_pool_nodes({"n1", "n2", "n3"});  // n3 joins the pool
  EXPECT_EQ(watch->correct(&out), Send);
  EXPECT_EQ(
      out,
      R"({"type":"MODIFIED","object":{"metadata":{"name":"s1","namespace":"d"},"endpoints":["n1","n3"]}})"
      "\n");

  // A new event through the watch, then n2 leaves: both objects are corrected.
  out.clear();
  EXPECT_EQ(
      watch->event(
          R"({"type":"ADDED","object":{"metadata":{"name":"s3","namespace":"d"},"endpoints":["n2"]}})",
          &out),
      Send);
  out.clear();
  set_pool_nodes({"n1", "n3"});
  EXPECT_EQ(watch->correct(&out), Send);
  EXPECT_EQ(
      out,
      R"({"type":"MODIFIED","object":{"metadata":{"name":"s2","namespace":"d"},"endpoints":[]}})"
      "\n"
      R"({"type":"MODIFIED","object":{"metadata":{"name":"s3","namespace":"d"},"endpoints":[]}})"
      "\n");

  // A later watch of the same client (a re-watch) corrects the same objects; deleted ones are gone.
  auto rewatch = chain(FilterChain::Shape::Watch, pool_only_, client);
  out.clear();
  EXPECT_EQ(
      rewatch->event(
          R"({"type":"DELETED","object":{"metadata":{"name":"s3","namespace":"d"},"endpoints":[]}})",
          &out),
      Send);
  out.clear();
  set_pool_nodes({}, "hidden");
  EXPECT_EQ(rewatch->correct(&out), Send);
  EXPECT_EQ(
      out,
      R"({"type":"DELETED","object":{"metadata":{"name":"s1","namespace":"d"},"endpoints":["n1","n3"]}})"
      "\n"
      R"({"type":"DELETED","object":{"metadata":{"name":"s2","namespace":"d"},"endpoints":["n2"]}})"
      "\n");
  out.clear();
  set_pool_nodes({"n2"});
  EXPECT_EQ(rewatch->correct(&out), Send);
  EXPECT_EQ(
      out,
      R"({"type":"ADDED","object":{"metadata":{"name":"s1","namespace":"d"},"endpoints":[]}})"
      "\n"
      R"({"type":"ADDED","object":{"metadata":{"name":"s2","namespace":"d"},"endpoints":["n2"]}})"
      "\n");
  EXPECT_EQ(metrics_.corrections.with({"event"}).value(), 7u);
}

TEST_F(FilterChainTest, ANewFirstPageReplacesWhatTheClientHeld) {
  auto client = std::make_shared<ClientView>(unbounded_budget());
  auto first = chain(FilterChain::Shape::List, pool_only_, client);
  run(*first, kSlices);
  auto again = chain(FilterChain::Shape::List, pool_only_, client);
  run(*again, R"({"items":[{"metadata":{"name":"s9","namespace":"d"},"endpoints":["n3"]}]})");
  auto watch = chain(FilterChain::Shape::Watch, pool_only_, client);
  set_pool_nodes({"n3"});
  std::string out;
  EXPECT_EQ(watch->correct(&out), Send);
  EXPECT_EQ(
      out,
      R"({"type":"MODIFIED","object":{"metadata":{"name":"s9","namespace":"d"},"endpoints":["n3"]}})"
      "\n");
}

TEST_F(FilterChainTest, ANonReactiveChainHasNothingToCorrect) {
  auto watch =
      chain(FilterChain::Shape::Watch, standin_, std::make_shared<ClientView>(unbounded_budget()));
  EXPECT_FALSE(watch->reactive());
  std::string out;
  EXPECT_EQ(watch->correct(&out), Hold);
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace yurthub::filters
