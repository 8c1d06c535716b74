// Tests for kube/selector.cc: label selector parsing (every Kubernetes operator, the lexer's
// whitespace and keyword rules, key/value validation, the `in ()` quirk), matching against label
// maps and objects, covers() (including a brute-force soundness check over a small universe of
// label sets) and canonical(); field selector parsing (escapes, operators, empty terms), matching
// against pods (missing fields, null, booleans, numbers), the apiserver's per-kind field sets
// (nodes' spec.unschedulable, pods' status.podIP), covers() and required_value().
#include "kube/selector.h"
#include "test/base/json_test_support.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <vector>

namespace yurthub::kube {
namespace {

using ::yurthub::test_support::parse_json;

using Op = LabelRequirement::Op;

LabelSelector must_parse_labels(const std::string& text) {
  auto selector = LabelSelector::parse(text);
  EXPECT_TRUE(selector.ok()) << text << ": " << selector.error().message;
  return selector.ok() ? std::move(selector).value() : LabelSelector();
}

FieldSelector must_parse_fields(const std::string& text) {
  auto selector = FieldSelector::parse(text);
  EXPECT_TRUE(selector.ok()) << text << ": " << selector.error().message;
  return selector.ok() ? std::move(selector).value() : FieldSelector();
}

// ---- Label selectors ----

// One selector text and what parsing it must give (label and field selectors alike).
struct ParseCase {
  std::string text;
  std::string canonical;  // expected canonical() when the parse succeeds
  std::string error;      // non-empty: the parse must fail with a message containing this
};

// Parses every case with Selector::parse; a selector that parses must also parse back from its
// canonical() to the same requirements.
template <class Selector>
void check_parse_cases(const std::vector<ParseCase>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE("selector: " + c.text);
    auto selector = Selector::parse(c.text);
    if (!c.error.empty()) {
      ASSERT_FALSE(selector.ok()) << "parsed as " << selector->canonical();
      EXPECT_NE(selector.error().message.find(c.error), std::string::npos)
          << selector.error().message;
      continue;
    }
    ASSERT_TRUE(selector.ok()) << selector.error().message;
    EXPECT_EQ(selector->canonical(), c.canonical);
    EXPECT_EQ(selector->empty(), c.canonical.empty());
    auto again = Selector::parse(selector->canonical());
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->requirements(), selector->requirements());
  }
}

const std::string k63(63, 'a');
const std::string k64(64, 'a');

const std::vector<ParseCase> kLabelParseCases = {
    {"", "", ""},
    {"  \t ", "", ""},
    {"a=b", "a=b", ""},
    {"a==b", "a=b", ""},
    {"a!=b", "a!=b", ""},
    {" a = b ", "a=b", ""},
    {"a\t==\nb", "a=b", ""},
    {"a=", "a=", ""},
    {"a=,b", "a=,b", ""},
    {"a", "a", ""},
    {"!a", "!a", ""},
    {"! a", "!a", ""},
    {"a in (x,y)", "a in (x,y)", ""},
    {"a in (y, x ,y)", "a in (x,y)", ""},
    {"a in(x)", "a=x", ""},
    {"a notin (x)", "a!=x", ""},
    {"a notin (x,y)", "a notin (x,y)", ""},
    {"a in ()", "a=", ""},
    {"a in (,x)", "a in (,x)", ""},
    {"a in (x,)", "a in (,x)", ""},
    {"a in (x,,y)", "a in (,x,y)", ""},
    {"x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z!=", ""},  // labels.Parse's doc example
    {"b=1,a=2", "a=2,b=1", ""},
    {"a,a,a=b,a=b", "a=b,a", ""},
    {"in in (in)", "in=in", ""},
    {"notin=in", "notin=in", ""},
    {"a in (notin,in)", "a in (in,notin)", ""},
    {"example.com/app=web", "example.com/app=web", ""},
    {"A_b-c.9=X.y_Z-1", "A_b-c.9=X.y_Z-1", ""},
    {"a>5", "a>5", ""},
    {"a < 10", "a<10", ""},
    {"a>007", "a>007", ""},
    {k63 + "=" + k63, k63 + "=" + k63, ""},
    // Errors.
    {",", "", "found ',', expected: !, identifier, or 'end of string'"},
    {"a,", "", "expected: identifier after ','"},
    {",a", "", "found ','"},
    {"a=b=c", "", "found '=', expected: ',' or 'end of string'"},
    {"a=b c", "", "expected: ',' or 'end of string'"},
    {"a b", "", "found 'b', expected: in, notin, =, ==, !=, gt, lt"},
    {"a!", "", "found '!', expected: in, notin"},
    {"!a=b", "", "found '=', expected: ',' or 'end of string'"},
    {"!", "", "found '', expected: identifier"},
    {"a===b", "", "found '=', expected: identifier"},
    {"a in x", "", "found 'x', expected: '('"},
    {"a in (x", "", "found '', expected: ',' or ')'"},
    {"a in (x y)", "", "found 'y', expected: ',' or ')'"},
    {"a in (=)", "", "expected: ',', ')' or identifier"},
    {"a=(b)", "", "found '(', expected: identifier"},
    {"-a=b", "", "invalid label key \"-a\""},
    {"a-=b", "", "invalid label key \"a-\""},
    {"Example.com/a=b", "", "prefix part must be a lowercase RFC 1123 subdomain"},
    {"ex..com/a=b", "", "prefix part must be a lowercase RFC 1123 subdomain"},
    {"/a=b", "", "prefix part must be non-empty"},
    {"a/=b", "", "name part must be non-empty"},
    {"a/b/c=d", "", "at most one '/'"},
    {k64 + "=b", "", "name part must be no more than 63 characters"},
    {std::string(254, 'p') + "/a=b", "", "prefix part must be"},
    {"a=" + k64, "", "must be no more than 63 characters"},
    {"a=-b", "", "invalid label value \"-b\" for key \"a\""},
    {"a in (x,y.)", "", "invalid label value \"y.\""},
    {"a>x", "", "the value must be an integer"},
    {"a>-1", "", "invalid label value \"-1\""},
    {"a>99999999999999999999", "", "the value must be an integer"},
    {std::string("a=b\0c", 5), "", "NUL byte"},
};

TEST(LabelSelectorTest, Parse) { check_parse_cases<LabelSelector>(kLabelParseCases); }

TEST(LabelSelectorTest, ParseErrorNamesTheSelector) {
  auto selector = LabelSelector::parse("a in x");
  ASSERT_FALSE(selector.ok());
  EXPECT_EQ(selector.error().message,
            "invalid label selector \"a in x\": unable to parse requirement: found 'x', expected: "
            "'('");
}

TEST(LabelSelectorTest, RequirementsAreSortedAndNormalized) {
  LabelSelector selector = must_parse_labels("z notin (b,a), !y, x in (v), w==1, w>0");
  std::vector<LabelRequirement> expected = {
      {"w", Op::Equals, {"1"}},    {"w", Op::GreaterThan, {"0"}}, {"x", Op::Equals, {"v"}},
      {"y", Op::DoesNotExist, {}}, {"z", Op::NotIn, {"a", "b"}},
  };
  EXPECT_EQ(selector.requirements(), expected);
}

struct LabelMatchCase {
  std::string selector;
  std::string labels;  // JSON for metadata.labels, or "absent"
  bool matches;
};

const std::vector<LabelMatchCase> kLabelMatchCases = {
    {"", "absent", true},
    {"", R"({"a":"b"})", true},
    {"a=b", R"({"a":"b"})", true},
    {"a=b", R"({"a":"c"})", false},
    {"a=b", R"({})", false},
    {"a=b", "absent", false},
    {"a=b", "null", false},
    {"a!=b", R"({})", true},
    {"a!=b", "absent", true},
    {"a!=b", R"({"a":"b"})", false},
    {"a!=b", R"({"a":"c"})", true},
    {"a in (x,y)", R"({"a":"y"})", true},
    {"a in (x,y)", R"({"a":"z"})", false},
    {"a in (x,y)", R"({})", false},
    {"a notin (x,y)", R"({})", true},
    {"a notin (x,y)", R"({"a":"x"})", false},
    {"a notin (x,y)", R"({"a":"z"})", true},
    {"a", R"({"a":""})", true},
    {"a", R"({"b":"a"})", false},
    {"!a", R"({})", true},
    {"!a", "absent", true},
    {"!a", R"({"a":"x"})", false},
    {"a=", R"({"a":""})", true},
    {"a=", R"({})", false},
    {"a in ()", R"({"a":""})", true},
    {"a in ()", R"({"a":"x"})", false},
    {"a>5", R"({"a":"6"})", true},
    {"a>5", R"({"a":"5"})", false},
    {"a>5", R"({"a":"x"})", false},
    {"a>5", R"({})", false},
    {"a<5", R"({"a":"-3"})", true},
    {"a<5", R"({"a":"5"})", false},
    {"a=b,c!=d", R"({"a":"b","c":"e"})", true},
    {"a=b,c!=d", R"({"a":"b","c":"d"})", false},
    {"a=b,c!=d", R"({"a":"b"})", true},
    {"example.com/role=edge", R"({"example.com/role":"edge"})", true},
    {"example.com/role=edge", R"({"role":"edge"})", false},
    // A non-string label value is not valid Kubernetes; it is treated as absent.
    {"a", R"({"a":1})", false},
    {"!a", R"({"a":1})", true},
};

TEST(LabelSelectorTest, Matches) {
  for (const auto& c : kLabelMatchCases) {
    SCOPED_TRACE("selector: " + c.selector + " labels: " + c.labels);
    LabelSelector selector = must_parse_labels(c.selector);
    if (c.labels == "absent") {
      EXPECT_EQ(selector.matches(nullptr), c.matches);
      EXPECT_EQ(selector.matches_object(parse_json(R"({"metadata":{"name":"p"}})")), c.matches);
      continue;
    }
    rapidjson::Document labels = parse_json(c.labels);
    EXPECT_EQ(selector.matches(&labels), c.matches);
    rapidjson::Document object =
        parse_json(R"({"kind":"Pod","metadata":{"name":"p","labels":)" + c.labels + "}}");
    EXPECT_EQ(selector.matches_object(object), c.matches);
  }
}

TEST(LabelSelectorTest, MatchesObjectWithoutMetadata) {
  struct Case {
    std::string object;
    bool exists_matches;
  };
  const std::vector<Case> cases = {
      {R"({})", false},
      {R"([])", false},
      {R"("x")", false},
      {R"({"metadata":7})", false},
      {R"({"metadata":{"labels":{"a":"1"}}})", true},
  };
  LabelSelector exists = must_parse_labels("a");
  LabelSelector absent = must_parse_labels("!a");
  for (const auto& c : cases) {
    SCOPED_TRACE(c.object);
    rapidjson::Document object = parse_json(c.object);
    EXPECT_EQ(exists.matches_object(object), c.exists_matches);
    EXPECT_EQ(absent.matches_object(object), !c.exists_matches);
  }
}

struct CoversCase {
  std::string broad;
  std::string narrow;
  bool covers;
};

const std::vector<CoversCase> kLabelCoversCases = {
    {"", "", true},
    {"", "a=x", true},
    {"a=x", "", false},
    {"a=x", "a=x", true},
    {"a=x", "a==x", true},
    {"a=x", "a in (x)", true},
    {"a=x", "a=x,c=y", true},
    {"a=x,c=y", "a=x", false},
    {"a=x", "c=x", false},
    {"a=x", "a in (x,y)", false},
    {"a", "a=x", true},
    {"a", "a in (x,y)", true},
    {"a", "a>3", true},
    {"a", "a!=x", false},
    {"a", "!a", false},
    {"a in (x,y)", "a=x", true},
    {"a in (x,y)", "a in (x,y)", true},
    {"a in (x,y)", "a in (x,y,z)", false},
    {"a in (x,y)", "a", false},
    {"a!=x", "!a", true},
    {"a!=x", "a notin (x,y)", true},
    {"a!=x", "a=y", true},
    {"a!=x", "a in (y,z)", true},
    {"a!=x", "a=x", false},
    {"a!=x", "a in (x,y)", false},
    {"a!=x", "a", false},
    {"a!=x", "a!=y", false},
    {"a notin (x,y)", "a!=x", false},
    {"a notin (x,y)", "a notin (x,y,z)", true},
    {"!a", "!a", true},
    {"!a", "a!=x", false},
    {"!a", "c=x", false},
    {"a>5", "a>7", true},
    {"a>5", "a>5", true},
    {"a>5", "a>3", false},
    {"a>5", "a<7", false},
    {"a<6", "a<3", true},
    {"a<6", "a<7", false},
    {"a=x,c", "c=z,a=x,e", true},
};

// Every label set over keys {a, c} with each key absent or one of a few values.
std::vector<rapidjson::Document> label_universe() {
  const std::vector<std::string> values = {"<absent>", "", "x", "y", "z", "3", "6", "7"};
  std::vector<rapidjson::Document> universe;
  for (const auto& a : values) {
    for (const auto& c : values) {
      std::string json = "{";
      if (a != "<absent>") json += "\"a\":\"" + a + "\"";
      if (c != "<absent>") json += std::string(json.size() > 1 ? "," : "") + "\"c\":\"" + c + "\"";
      universe.push_back(parse_json(json + "}"));
    }
  }
  return universe;
}

TEST(LabelSelectorTest, Covers) {
  for (const auto& c : kLabelCoversCases) {
    SCOPED_TRACE("broad: " + c.broad + " narrow: " + c.narrow);
    EXPECT_EQ(must_parse_labels(c.broad).covers(must_parse_labels(c.narrow)), c.covers);
  }
}

// covers() must never claim coverage that isn't true: check every pair of selectors from the table
// against every label set of a small universe.
TEST(LabelSelectorTest, CoversIsSound) {
  std::vector<std::string> texts;
  for (const auto& c : kLabelCoversCases) {
    texts.push_back(c.broad);
    texts.push_back(c.narrow);
  }
  std::vector<rapidjson::Document> universe = label_universe();
  int proven = 0;
  for (const auto& broad_text : texts) {
    LabelSelector broad = must_parse_labels(broad_text);
    for (const auto& narrow_text : texts) {
      LabelSelector narrow = must_parse_labels(narrow_text);
      if (!broad.covers(narrow)) continue;
      ++proven;
      for (const auto& labels : universe) {
        if (narrow.matches(&labels)) {
          EXPECT_TRUE(broad.matches(&labels)) << broad_text << " claimed to cover " << narrow_text;
        }
      }
    }
  }
  EXPECT_GT(proven, 100);  // the check above really ran on many pairs
}

// ---- Field selectors ----

const std::vector<ParseCase> kFieldParseCases = {
    {"", "", ""},
    {",", "", ""},
    {"metadata.name=foo", "metadata.name=foo", ""},
    {"metadata.name==foo", "metadata.name=foo", ""},
    {"spec.nodeName!=", "spec.nodeName!=", ""},
    {"spec.nodeName=", "spec.nodeName=", ""},
    {"b=1,a=2", "a=2,b=1", ""},
    {"a=1,,b=2,", "a=1,b=2", ""},
    {"a=1,a=1", "a=1", ""},
    {R"(a=x\,y)", R"(a=x\,y)", ""},
    {R"(a=x\=y)", R"(a=x\=y)", ""},
    {R"(a=x\\y)", R"(a=x\\y)", ""},
    {R"(a=x\\,b=y)", R"(a=x\\,b=y)", ""},
    {"a!b=c", "a!b=c", ""},
    {"a=!b", "a=!b", ""},
    {" a = b ", " a = b ", ""},  // like fields.ParseSelector: no trimming
    {"a", "", "can't understand \"a\""},
    {"a=b,c", "", "can't understand \"c\""},
    {"a=b=c", "", "unescaped '=' in value"},
    {"a===b", "", "unescaped '=' in value"},
    {"a!=b=c", "", "unescaped '=' in value"},
    {R"(a=x\y)", "", R"(invalid escape sequence: \y)"},
    {R"(a=x\)", "", R"(invalid escape sequence: \)"},
};

TEST(FieldSelectorTest, Parse) { check_parse_cases<FieldSelector>(kFieldParseCases); }

TEST(FieldSelectorTest, ParsedRequirements) {
  FieldSelector selector = must_parse_fields(R"(spec.nodeName!=,metadata.name==a\,b\=c\\d)");
  std::vector<FieldRequirement> expected = {
      {"metadata.name", true, R"(a,b=c\d)"},
      {"spec.nodeName", false, ""},
  };
  EXPECT_EQ(selector.requirements(), expected);
  auto bad = FieldSelector::parse("x");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "invalid field selector \"x\": can't understand \"x\"");
}

const char kScheduledPod[] = R"({
  "metadata": {"name": "web-1", "namespace": "default", "labels": {"app": "web"}},
  "spec": {"nodeName": "edge-1", "hostNetwork": true, "priority": 3, "ratio": 0.5},
  "status": {"phase": "Running"}})";
const char kUnscheduledPod[] = R"({
  "metadata": {"name": "p2", "namespace": "kube-system"},
  "spec": {"nodeName": null},
  "status": {"phase": "Pending"}})";

struct FieldMatchCase {
  std::string selector;
  bool scheduled;    // expected result on kScheduledPod
  bool unscheduled;  // expected result on kUnscheduledPod
};

const std::vector<FieldMatchCase> kFieldMatchCases = {
    {"", true, true},
    {"spec.nodeName=edge-1", true, false},
    {"spec.nodeName==edge-1", true, false},
    {"spec.nodeName=", false, true},  // null and missing compare as ""
    {"spec.nodeName!=", true, false},
    {"spec.nodeName!=edge-1", false, true},
    {"metadata.namespace=default,status.phase=Running", true, false},
    {"metadata.namespace!=default", false, true},
    {"metadata.name=p2,metadata.namespace=kube-system", false, true},
    {"spec.hostNetwork=true", true, false},
    {"spec.hostNetwork!=true", false, true},
    {"spec.priority=3", true, false},
    {"spec.priority=3.0", false, false},
    {"spec.ratio=0.5", true, false},
    {"spec.missing.deep=", true, true},
    {"metadata.name.sub=", true, true},  // descending into a string finds nothing
    {R"(metadata.labels={"app":"web"})", true, false},
    {"status.phase=Running,status.phase=Pending", false, false},
};

TEST(FieldSelectorTest, Matches) {
  rapidjson::Document scheduled = parse_json(kScheduledPod);
  rapidjson::Document unscheduled = parse_json(kUnscheduledPod);
  for (const auto& c : kFieldMatchCases) {
    SCOPED_TRACE("selector: " + c.selector);
    FieldSelector selector = must_parse_fields(c.selector);
    EXPECT_EQ(selector.matches(scheduled, "", "pods"), c.scheduled);
    EXPECT_EQ(selector.matches(unscheduled, "", "pods"), c.unscheduled);
  }
}

TEST(FieldSelectorTest, MatchesNonObject) {
  rapidjson::Document array = parse_json("[1]");
  EXPECT_TRUE(must_parse_fields("a=").matches(array, "", "configmaps"));
  EXPECT_FALSE(must_parse_fields("a=1").matches(array, "", "configmaps"));
}

// The apiserver selects on its field set for the kind, not on the JSON: NodeToSelectableFields
// (pkg/registry/core/node/strategy.go) has "spec.unschedulable":
// fmt.Sprint(node.Spec.Unschedulable), so a node without the field is "false".
TEST(FieldSelectorTest, NodeWithoutUnschedulableIsFalse) {
  rapidjson::Document plain = parse_json(R"({"metadata":{"name":"edge-1"},"spec":{}})");
  rapidjson::Document no_spec = parse_json(R"({"metadata":{"name":"edge-2"}})");
  rapidjson::Document cordoned =
      parse_json(R"({"metadata":{"name":"edge-3"},"spec":{"unschedulable":true}})");
  FieldSelector schedulable = must_parse_fields("spec.unschedulable=false");
  EXPECT_TRUE(schedulable.matches(plain, "", "nodes"));
  EXPECT_TRUE(schedulable.matches(no_spec, "", "nodes"));
  EXPECT_FALSE(schedulable.matches(cordoned, "", "nodes"));
  EXPECT_FALSE(must_parse_fields("spec.unschedulable=").matches(plain, "", "nodes"));
  EXPECT_TRUE(must_parse_fields("spec.unschedulable!=true").matches(plain, "", "nodes"));
  EXPECT_TRUE(must_parse_fields("spec.unschedulable=true").matches(cordoned, "", "nodes"));
  // Only nodes have that field set: another kind reads the JSON.
  EXPECT_FALSE(schedulable.matches(plain, "", "configmaps"));
}

// The core Event's field set (pkg/registry/core/event/strategy.go): "source" is the source's
// component, or the reporting controller when the event has none.
TEST(FieldSelectorTest, EventSourceIsItsComponent) {
  rapidjson::Document kubelet = parse_json(
      R"({"involvedObject":{"kind":"Pod"},"source":{"component":"kubelet","host":"edge-1"}})");
  rapidjson::Document reported =
      parse_json(R"({"involvedObject":{"kind":"Pod"},"reportingComponent":"my-controller"})");
  EXPECT_TRUE(must_parse_fields("source=kubelet").matches(kubelet, "", "events"));
  EXPECT_FALSE(must_parse_fields("source=my-controller").matches(kubelet, "", "events"));
  EXPECT_TRUE(must_parse_fields("source=my-controller").matches(reported, "", "events"));
  EXPECT_TRUE(must_parse_fields("source!=kubelet").matches(reported, "", "events"));
}

// The pod field set (ToSelectableFields, pkg/registry/core/pod/strategy.go): status.podIP is
// PodIPs[0].IP of the internal pod ("" without one), whose v1 status.podIP, when set, is the
// first; spec.host is converted to spec.nodeName; status.podIPs is no field of the set;
// spec.hostNetwork defaults to "false".
TEST(FieldSelectorTest, PodFieldSet) {
  rapidjson::Document dual = parse_json(
      R"({"spec":{"nodeName":"edge-1"},"status":{"podIP":"10.0.0.5",
          "podIPs":[{"ip":"10.0.0.5"},{"ip":"fd00::5"}]}})");
  rapidjson::Document ips_only = parse_json(R"({"status":{"podIPs":[{"ip":"10.0.0.6"}]}})");
  rapidjson::Document no_ip = parse_json(R"({"status":{"phase":"Pending"}})");
  EXPECT_TRUE(must_parse_fields("status.podIP=10.0.0.5").matches(dual, "", "pods"));
  EXPECT_FALSE(must_parse_fields("status.podIP=fd00::5").matches(dual, "", "pods"));
  EXPECT_TRUE(must_parse_fields("status.podIP=10.0.0.6").matches(ips_only, "", "pods"));
  EXPECT_TRUE(must_parse_fields("status.podIP=").matches(no_ip, "", "pods"));
  EXPECT_TRUE(must_parse_fields("status.podIPs=").matches(dual, "", "pods"));
  EXPECT_TRUE(must_parse_fields("spec.host=edge-1").matches(dual, "", "pods"));
  EXPECT_TRUE(must_parse_fields("spec.hostNetwork=false").matches(no_ip, "", "pods"));
}

// Integer fields print their Go zero value when absent: strconv.Itoa(int(rs.Status.Replicas)) for
// replica sets and replication controllers, strconv.Itoa(int(job.Status.Succeeded)) for jobs'
// status.successful.
TEST(FieldSelectorTest, IntegerFieldsDefaultToZero) {
  rapidjson::Document empty = parse_json(R"({"status":{}})");
  rapidjson::Document done = parse_json(R"({"status":{"succeeded":2}})");
  EXPECT_TRUE(must_parse_fields("status.replicas=0").matches(empty, "apps", "replicasets"));
  EXPECT_TRUE(must_parse_fields("status.replicas=0").matches(empty, "", "replicationcontrollers"));
  EXPECT_TRUE(must_parse_fields("status.successful=0").matches(empty, "batch", "jobs"));
  EXPECT_TRUE(must_parse_fields("status.successful=2").matches(done, "batch", "jobs"));
}

const std::vector<CoversCase> kFieldCoversCases = {
    {"", "", true},
    {"", "a=b", true},
    {"a=b", "", false},
    {"a=b", "a=b", true},
    {"a=b", "a==b", true},
    {"a=b", "a=b,c=d", true},
    {"a=b,c=d", "a=b", false},
    {"a=b", "a=c", false},
    {"a=b", "a!=c", false},
    {"a!=x", "a=y", true},
    {"a!=x", "a=x", false},
    {"a!=x", "a!=x", true},
    {"a!=x", "a!=y", false},
    {"a!=x", "b=y", false},
    {"spec.nodeName!=", "spec.nodeName=edge-1", true},
};

TEST(FieldSelectorTest, Covers) {
  for (const auto& c : kFieldCoversCases) {
    SCOPED_TRACE("broad: " + c.broad + " narrow: " + c.narrow);
    EXPECT_EQ(must_parse_fields(c.broad).covers(must_parse_fields(c.narrow)), c.covers);
  }
}

TEST(FieldSelectorTest, RequiredValue) {
  struct Case {
    std::string selector;
    std::string path;
    std::optional<std::string> value;
  };
  const std::vector<Case> cases = {
      {"metadata.name=foo,spec.nodeName!=bar", "metadata.name", "foo"},
      {"metadata.name=foo,spec.nodeName!=bar", "spec.nodeName", std::nullopt},
      {"metadata.name=foo", "metadata.namespace", std::nullopt},
      {"metadata.name==", "metadata.name", ""},
      {"", "metadata.name", std::nullopt},
      {R"(metadata.name=a\,b)", "metadata.name", "a,b"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.selector + " / " + c.path);
    EXPECT_EQ(must_parse_fields(c.selector).required_value(c.path), c.value);
  }
}

}  // namespace
}  // namespace yurthub::kube
