// Tests of the fake apiserver's own label and field selectors (selectors.h, field_labels.h):
// parsing, the apiserver's 400 wording for what it refuses (label texts as captured from
// kube-apiserver and kubectl output), the per-resource field labels, and matching.
#include "test/fake_apiserver/selectors.h"

#include <gtest/gtest.h>

#include "test/fake_apiserver/json_util.h"
#include "test/fake_apiserver/resources.h"

namespace yurthub::fake {
namespace {

rapidjson::Document json(const std::string& text) { return parse_json(text).value(); }

std::string label_error(const std::string& selector) {
  auto s = LabelSelector::parse(selector);
  return s ? "(parsed)" : s.error().message;
}

TEST(LabelSelectorTest, MatchesLikeTheApiserver) {
  auto pod = json(R"({"metadata":{"labels":{"app":"web","tier":"front","n":"7"}}})");
  auto bare = json(R"({"metadata":{}})");
  struct Case {
    const char* selector;
    bool pod, bare;
  } cases[] = {
      {"", true, true},
      {"app=web", true, false},
      {"app==web", true, false},
      {"app = web", true, false},
      {"app!=web", false, true},
      {"app!=db", true, true},
      {"app in (web,db)", true, false},
      {"app in (db)", false, false},
      {"app notin (db, cache)", true, true},
      {"app notin (web)", false, true},
      {"app", true, false},
      {"!app", false, true},
      {"app,tier=front", true, false},
      {"app=web,tier=back", false, false},
      {"n>5", true, false},
      {"n<5", false, false},
      {"app>5", false, false},     // not an integer label: no match
      {"in=notin", false, false},  // keywords are identifiers where a key or value goes
      {"app=", false, false},
      {"missing=", false, false},  // the empty value needs the label to exist
      {"x in ()", false, false},
      {"app in (,web)", true, false},
  };
  for (const auto& c : cases) {
    auto s = LabelSelector::parse(c.selector);
    ASSERT_TRUE(s) << c.selector << ": " << s.error().message;
    EXPECT_EQ(s->matches(pod), c.pod) << c.selector;
    EXPECT_EQ(s->matches(bare), c.bare) << c.selector;
  }
}

TEST(LabelSelectorTest, ErrorsAreTheApiserversWords) {
  const std::string name_regex =
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
      "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
      "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  // As kubectl printed it from a real apiserver: "unable to parse requirement: <nil>: Invalid
  // value: \"app:monolith\": name part must consist of ...".
  EXPECT_EQ(label_error("app:monolith"),
            "unable to parse requirement: <nil>: Invalid value: \"app:monolith\": " + name_regex);
  EXPECT_EQ(label_error("a/b/c ?=? def"),
            "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name must "
            "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
            "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
            "subdomain prefix and '/' (e.g. 'example.com/MyName')");
  EXPECT_EQ(label_error("app.kubernetes_io/name=x"),
            "unable to parse requirement: <nil>: Invalid value: \"app.kubernetes_io/name\": prefix "
            "part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
            "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
            "'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  EXPECT_EQ(label_error("==="), "found '==', expected: !, identifier, or 'end of string'");
  EXPECT_EQ(label_error("a b"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
  EXPECT_EQ(label_error("a=b c"), "found 'c', expected: ',' or 'end of string'");
  EXPECT_EQ(label_error("a=b,"), "found '', expected: identifier after ','");
  EXPECT_EQ(label_error("x in (a"), "unable to parse requirement: found '', expected: ',' or ')'");
  EXPECT_EQ(label_error("x in a"), "unable to parse requirement: found 'a' expected: '('");
  EXPECT_EQ(label_error("x>a"),
            "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' "
            "operators, the value must be an integer");
  EXPECT_EQ(label_error("x=a*b"),
            "unable to parse requirement: values[0][x]: Invalid value: \"a*b\": a valid label must "
            "be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
            "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
}

TEST(FieldSelectorTest, ParsesAndEscapesLikeFieldsParseSelector) {
  auto s = FieldSelector::parse("spec.nodeName=a\\,b,metadata.name!=x,status.phase==Running");
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_EQ(s->terms().size(), 3u);  // sorted
  EXPECT_EQ(s->terms()[0].field, "metadata.name");
  EXPECT_FALSE(s->terms()[0].equals);
  EXPECT_EQ(s->terms()[1].value, "a,b");
  EXPECT_EQ(s->terms()[2].value, "Running");
  EXPECT_TRUE(FieldSelector::parse("")->empty());
  EXPECT_TRUE(FieldSelector::parse(",")->empty());
  EXPECT_EQ(FieldSelector::parse("a").error().message,
            "invalid selector: 'a'; can't understand 'a'");
  EXPECT_EQ(FieldSelector::parse("b=1,a").error().message,
            "invalid selector: 'b=1,a'; can't understand 'a'");
  EXPECT_EQ(FieldSelector::parse("a=b=c").error().message,
            "invalid field selector: unescaped character in value: 61");
  EXPECT_EQ(FieldSelector::parse("a=b\\x").error().message,
            "invalid field selector: invalid escape sequence: \\x");
}

TEST(FieldSelectorTest, FieldLabelsPerResource) {
  auto refused = [](const char* group, const char* version, const char* resource,
                    const char* text) {
    auto s = FieldSelector::parse(text);
    Status st = s->convert(*find_resource(group, version, resource));
    return st ? std::string("(accepted)") : st.error().message;
  };
  EXPECT_EQ(refused("", "v1", "pods", "spec.bogus=x"), "field label not supported: spec.bogus");
  EXPECT_EQ(refused("", "v1", "pods", "spec.nodeName=n,status.podIP=1.2.3.4"), "(accepted)");
  EXPECT_EQ(refused("", "v1", "pods", "spec.hostNetwork=true"),
            "field label not supported: spec.hostNetwork");  // v1.28
  EXPECT_EQ(refused("", "v1", "nodes", "metadata.name=n,spec.unschedulable=false"), "(accepted)");
  EXPECT_EQ(refused("", "v1", "nodes", "metadata.namespace=x"),
            "field label not supported: metadata.namespace");
  EXPECT_EQ(refused("", "v1", "configmaps", "metadata.namespace=default"), "(accepted)");
  EXPECT_EQ(
      refused("", "v1", "configmaps", "data.x=1"),
      "\"data.x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"");
  EXPECT_EQ(refused("", "v1", "secrets", "type=Opaque"), "(accepted)");
  EXPECT_EQ(refused("", "v1", "events", "involvedObject.name=web-0,reason=x"), "(accepted)");
  EXPECT_EQ(refused("apps.openyurt.io", "v1beta1", "nodepools", "metadata.namespace=x"),
            "field label not supported: metadata.namespace");  // cluster-scoped custom resource
}

TEST(FieldSelectorTest, MatchesTheApiserversFieldSets) {
  auto pods = find_resource("", "v1", "pods");
  auto nodes = find_resource("", "v1", "nodes");
  auto matches = [](const ResourceInfo* r, const char* text, const std::string& object) {
    auto s = FieldSelector::parse(text);
    EXPECT_TRUE(s->convert(*r)) << text;
    return s->matches(json(object));
  };
  std::string pod =
      R"({"metadata":{"name":"web-0","namespace":"default"},"spec":{"nodeName":"n1"},)"
      R"("status":{"phase":"Running","podIP":"10.0.0.1","podIPs":[{"ip":"10.0.0.1"}]}})";
  EXPECT_TRUE(matches(pods, "spec.nodeName=n1", pod));
  EXPECT_TRUE(matches(pods, "spec.host=n1", pod));  // the legacy name for spec.nodeName
  EXPECT_FALSE(matches(pods, "spec.nodeName!=n1", pod));
  EXPECT_TRUE(matches(pods, "spec.nodeName=n1,metadata.namespace=default", pod));
  EXPECT_TRUE(matches(pods, "status.podIP=10.0.0.1", pod));
  EXPECT_TRUE(matches(pods, "spec.schedulerName=", pod));  // absent compares as ""
  EXPECT_TRUE(matches(pods, "spec.nodeName=", R"({"metadata":{"name":"p"},"spec":{}})"));
  EXPECT_TRUE(matches(nodes, "spec.unschedulable=false", R"({"metadata":{"name":"n"},"spec":{}})"));
  EXPECT_TRUE(matches(nodes, "spec.unschedulable=true", R"({"spec":{"unschedulable":true}})"));
}

}  // namespace
}  // namespace yurthub::fake
