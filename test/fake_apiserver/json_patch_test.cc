// Tests of the fake apiserver's own JSON Patch and JSON Merge Patch (json_patch.h): every example
// of RFC 6902 appendix A and of RFC 7386's section 3 and appendix A, then the places where
// kube-apiserver's evanphx/json-patch v4 departs from RFC 6902, and the operation limit.
#include "test/fake_apiserver/json_patch.h"

#include <gtest/gtest.h>

#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake {
namespace {

rapidjson::Document json(const std::string& text) {
  auto doc = parse_json(text);
  EXPECT_TRUE(doc) << text;
  return doc ? std::move(*doc) : rapidjson::Document();
}

struct Case {
  const char* name;
  const char* doc;
  const char* patch;
  const char* want;  // nullptr: the patch must fail (and leave the document alone)
};

// RFC 6902 appendix A, A.1 to A.16 (A.13's duplicate "op" is decoded as Go does: the last wins).
const Case kRfc6902[] = {
    {"A.1 add member", R"({"foo":"bar"})", R"([{"op":"add","path":"/baz","value":"qux"}])",
     R"({"baz":"qux","foo":"bar"})"},
    {"A.2 add element", R"({"foo":["bar","baz"]})",
     R"([{"op":"add","path":"/foo/1","value":"qux"}])", R"({"foo":["bar","qux","baz"]})"},
    {"A.3 remove member", R"({"baz":"qux","foo":"bar"})", R"([{"op":"remove","path":"/baz"}])",
     R"({"foo":"bar"})"},
    {"A.4 remove element", R"({"foo":["bar","qux","baz"]})", R"([{"op":"remove","path":"/foo/1"}])",
     R"({"foo":["bar","baz"]})"},
    {"A.5 replace", R"({"baz":"qux","foo":"bar"})",
     R"([{"op":"replace","path":"/baz","value":"boo"}])", R"({"baz":"boo","foo":"bar"})"},
    {"A.6 move member", R"({"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}})",
     R"([{"op":"move","from":"/foo/waldo","path":"/qux/thud"}])",
     R"({"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}})"},
    {"A.7 move element", R"({"foo":["all","grass","cows","eat"]})",
     R"([{"op":"move","from":"/foo/1","path":"/foo/3"}])",
     R"({"foo":["all","cows","eat","grass"]})"},
    {"A.8 test success", R"({"baz":"qux","foo":["a",2,"c"]})",
     R"([{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}])",
     R"({"baz":"qux","foo":["a",2,"c"]})"},
    {"A.9 test failure", R"({"baz":"qux"})", R"([{"op":"test","path":"/baz","value":"bar"}])",
     nullptr},
    {"A.10 nested member", R"({"foo":"bar"})",
     R"([{"op":"add","path":"/child","value":{"grandchild":{}}}])",
     R"({"foo":"bar","child":{"grandchild":{}}})"},
    {"A.11 unrecognized elements", R"({"foo":"bar"})",
     R"([{"op":"add","path":"/baz","value":"qux","xyz":123}])", R"({"foo":"bar","baz":"qux"})"},
    {"A.12 nonexistent target", R"({"foo":"bar"})",
     R"([{"op":"add","path":"/baz/bat","value":"qux"}])", nullptr},
    {"A.13 duplicate op", R"({"foo":"bar"})",
     R"([{"op":"add","path":"/baz","value":"qux","op":"remove"}])", nullptr},
    {"A.14 escape ordering", R"({"/":9,"~1":10})", R"([{"op":"test","path":"/~01","value":10}])",
     R"({"/":9,"~1":10})"},
    {"A.15 string is not number", R"({"/":9,"~1":10})",
     R"([{"op":"test","path":"/~01","value":"10"}])", nullptr},
    {"A.16 add array value", R"({"foo":["bar"]})",
     R"([{"op":"add","path":"/foo/-","value":["abc","def"]}])", R"({"foo":["bar",["abc","def"]]})"},
    // RFC 6902 4.4: a failed operation aborts the whole patch, earlier operations included.
    {"all or nothing", R"({"a":1})",
     R"([{"op":"add","path":"/b","value":2},{"op":"remove","path":"/nope"}])", nullptr},
};

// Where evanphx/json-patch v4, and so kube-apiserver v1.26, departs from RFC 6902.
const Case kApiserver[] = {
    {"replace of a missing member adds it", R"({"a":1})",
     R"([{"op":"replace","path":"/b","value":2}])", R"({"a":1,"b":2})"},
    {"replace past the end of an array fails", R"({"a":[1]})",
     R"([{"op":"replace","path":"/a/1","value":2}])", nullptr},
    // For add, -1 is one past the last element: it appends.
    {"negative index counts from the end", R"({"a":[1,2,3]})",
     R"([{"op":"remove","path":"/a/-1"},{"op":"add","path":"/a/-1","value":9}])",
     R"({"a":[1,2,9]})"},
    {"index below the start fails", R"({"a":[1]})", R"([{"op":"remove","path":"/a/-2"}])", nullptr},
    {"absent value is null", R"({"a":1})", R"([{"op":"add","path":"/b"}])", R"({"a":1,"b":null})"},
    {"test of a missing member against null passes", R"({"a":1})",
     R"([{"op":"test","path":"/b","value":null}])", R"({"a":1})"},
    {"add to the whole document fails", R"({"a":1})", R"([{"op":"add","path":"","value":{}}])",
     nullptr},
    {"replace of the whole document", R"({"a":1})",
     R"([{"op":"replace","path":"","value":{"b":2}}])", R"({"b":2})"},
    {"remove of a missing member fails", R"({"a":1})", R"([{"op":"remove","path":"/b"}])", nullptr},
    {"unknown op fails", R"({"a":1})", R"([{"op":"frobnicate","path":"/a"}])", nullptr},
    {"missing path fails", R"({"a":1})", R"([{"op":"remove"}])", nullptr},
    {"copy", R"({"a":{"b":[1]}})", R"([{"op":"copy","from":"/a","path":"/c"}])",
     R"({"a":{"b":[1]},"c":{"b":[1]}})"},
    {"move from a missing member fails", R"({"a":1})", R"([{"op":"move","from":"/x","path":"/y"}])",
     nullptr},
    // The cases below were found by comparing with the hub's kube/json_patch.cc and settled by
    // reading json-patch v4.12.0's patch.go (the version kube-apiserver v1.26 vendors).
    // copy: con.get() of a missing key is (nil, nil), and deepCopy(nil) adds null.
    {"copy from a missing member copies null", R"({"a":1})",
     R"([{"op":"copy","from":"/x","path":"/y"}])", R"({"a":1,"y":null})"},
    {"copy from past the end of an array fails", R"({"a":[1]})",
     R"([{"op":"copy","from":"/a/5","path":"/y"}])", nullptr},
    // replace "": errors.Wrapf(err, ...) with err == nil is nil, so a scalar is ignored.
    {"replace of the whole document with a scalar does nothing", R"({"a":1})",
     R"([{"op":"replace","path":"","value":3}])", R"({"a":1})"},
    // findObject splits on '/' and drops what precedes the first one.
    {"text before the first slash is ignored", R"({"a":1})",
     R"([{"op":"add","path":"x/b","value":2}])", R"({"a":1,"b":2})"},
    // lazyNode.equal compares scalars by their JSON text.
    {"test compares numbers by their text", R"({"a":1})",
     R"([{"op":"test","path":"/a","value":1.0}])", nullptr},
    {"test of an equal object passes", R"({"a":{"x":[1,"s"],"y":true}})",
     R"([{"op":"test","path":"/a","value":{"y":true,"x":[1,"s"]}}])",
     R"({"a":{"x":[1,"s"],"y":true}})"},
};

void run(const Case& c) {
  SCOPED_TRACE(c.name);
  auto doc = json(c.doc);
  auto patch = json(c.patch);
  auto error = apply_json_patch(doc, patch);
  if (c.want == nullptr) {
    ASSERT_TRUE(error) << to_json(doc);
    EXPECT_EQ(error->failure, PatchFailure::Rejected) << error->message;
    EXPECT_TRUE(json_equal(doc, json(c.doc))) << to_json(doc);
    return;
  }
  ASSERT_FALSE(error) << error->message;
  EXPECT_TRUE(json_equal(doc, json(c.want))) << to_json(doc);
}

TEST(JsonPatchTest, Rfc6902AppendixA) {
  for (const Case& c : kRfc6902) run(c);
}

TEST(JsonPatchTest, ApiserverDeparturesFromTheRfc) {
  for (const Case& c : kApiserver) run(c);
}

// test without "value" on a missing member: json-patch v4 reads op.value().raw through a nil
// pointer and panics, which the apiserver answers with a 500.
TEST(JsonPatchTest, TestWithoutValueOnAMissingMemberIsAServerError) {
  auto doc = json(R"({"a":1})");
  auto error = apply_json_patch(doc, json(R"([{"op":"test","path":"/b"}])"));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->failure, PatchFailure::Unknown) << error->message;
  // On a present member it is an ordinary failed test.
  error = apply_json_patch(doc, json(R"([{"op":"test","path":"/a"}])"));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->failure, PatchFailure::Rejected) << error->message;
}

TEST(JsonPatchTest, MalformedPatchesAreBadRequestsAndTooManyOperationsTooLarge) {
  auto doc = json(R"({"a":1})");
  auto error = apply_json_patch(doc, json(R"({"op":"add"})"));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->failure, PatchFailure::BadRequest);
  EXPECT_EQ(error->message, "json: cannot unmarshal object into Go value of type jsonpatch.Patch");
  error = apply_json_patch(doc, json("[1]"));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->message,
            "json: cannot unmarshal number into Go value of type jsonpatch.Operation");

  std::string many = "[";
  for (std::size_t i = 0; i <= kJsonPatchMaxOperations; ++i) {
    many += std::string(i ? "," : "") + R"({"op":"test","path":"/a","value":1})";
  }
  error = apply_json_patch(doc, json(many + "]"));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->failure, PatchFailure::TooLarge);
  EXPECT_EQ(error->message, "The allowed maximum operations in a JSON patch is 10000, got 10001");
}

TEST(JsonPatchTest, CopiesMayNotGrowTheDocumentPastTheLimit) {
  auto doc = json(R"({"a":")" + std::string(1 << 20, 'x') + R"("})");
  auto patch =
      json(R"([{"op":"copy","from":"/a","path":"/b"},{"op":"copy","from":"/a","path":"/c"},)"
           R"({"op":"copy","from":"/a","path":"/d"}])");
  auto error = apply_json_patch(doc, patch);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->failure, PatchFailure::Rejected);
  EXPECT_NE(error->message.find("exceeding the limit 3145728"), std::string::npos)
      << error->message;
}

// RFC 7386 appendix A, then the example of section 3.
TEST(MergePatchTest, Rfc7386Examples) {
  const char* cases[][3] = {
      {R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
      {R"({"a":"b"})", R"({"a":null})", R"({})"},
      {R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
      {R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})"},
      {R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})", R"({"a":{"b":"d"}})"},
      {R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
      {R"(["a","b"])", R"(["c","d"])", R"(["c","d"])"},
      {R"({"a":"b"})", R"(["c"])", R"(["c"])"},
      {R"({"a":"foo"})", "null", "null"},
      {R"({"a":"foo"})", R"("bar")", R"("bar")"},
      {R"({"e":null})", R"({"a":1})", R"({"e":null,"a":1})"},
      {R"([1,2])", R"({"a":"b","c":null})", R"({"a":"b"})"},
      {R"({})", R"({"a":{"bb":{"ccc":null}}})", R"({"a":{"bb":{}}})"},
      {R"({"title":"Goodbye!","author":{"givenName":"John","familyName":"Doe"},)"
       R"("tags":["example","sample"],"content":"This will be unchanged"})",
       R"({"title":"Hello!","phoneNumber":"+01-123-456-7890","author":{"familyName":null},)"
       R"("tags":["example"]})",
       R"({"title":"Hello!","author":{"givenName":"John"},"tags":["example"],)"
       R"("content":"This will be unchanged","phoneNumber":"+01-123-456-7890"})"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c[0]) + " + " + c[1]);
    auto doc = json(c[0]);
    apply_merge_patch(doc, json(c[1]));
    EXPECT_TRUE(json_equal(doc, json(c[2]))) << to_json(doc);
  }
}

}  // namespace
}  // namespace yurthub::fake
