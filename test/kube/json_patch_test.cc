// Tests for kube/json_patch.cc: JSON Patch (every example of RFC 6902's appendix A that a parsed
// document can express, pointer escapes, array index rules, move/copy edge cases, the exact error
// messages, and where kube-apiserver's evanphx/json-patch v4 departs from the RFC) and RFC 7386
// JSON Merge Patch (every example of the RFC's appendix A). Results are compared as compact JSON
// text, so member order and duplicates are checked too.
#include "kube/json_patch.h"
#include "test/base/json_test_support.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <vector>

namespace yurthub::kube {
namespace {

using ::yurthub::test_support::parse_json;
using ::yurthub::test_support::to_json;

// Re-serializes test JSON so expectations can be written with spaces.
std::string compact(const std::string& text) { return to_json(parse_json(text)); }

struct PatchCase {
  std::string name;
  std::string document;
  std::string patch;
  std::string result;  // expected document, when `error` is empty
  std::string error;   // expected error message (exact)
};

const std::vector<PatchCase> kJsonPatchCases = {
    // RFC 6902 appendix A.
    {"A.1 add an object member", R"({"foo":"bar"})",
     R"([{"op":"add","path":"/baz","value":"qux"}])", R"({"foo":"bar","baz":"qux"})", ""},
    {"A.2 add an array element", R"({"foo":["bar","baz"]})",
     R"([{"op":"add","path":"/foo/1","value":"qux"}])", R"({"foo":["bar","qux","baz"]})", ""},
    {"A.3 remove an object member", R"({"baz":"qux","foo":"bar"})",
     R"([{"op":"remove","path":"/baz"}])", R"({"foo":"bar"})", ""},
    {"A.4 remove an array element", R"({"foo":["bar","qux","baz"]})",
     R"([{"op":"remove","path":"/foo/1"}])", R"({"foo":["bar","baz"]})", ""},
    {"A.5 replace a value", R"({"baz":"qux","foo":"bar"})",
     R"([{"op":"replace","path":"/baz","value":"boo"}])", R"({"baz":"boo","foo":"bar"})", ""},
    {"A.6 move a value", R"({"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}})",
     R"([{"op":"move","from":"/foo/waldo","path":"/qux/thud"}])",
     R"({"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}})", ""},
    {"A.7 move an array element", R"({"foo":["all","grass","cows","eat"]})",
     R"([{"op":"move","from":"/foo/1","path":"/foo/3"}])",
     R"({"foo":["all","cows","eat","grass"]})", ""},
    {"A.8 test a value: success", R"({"baz":"qux","foo":["a",2,"c"]})",
     R"([{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}])",
     R"({"baz":"qux","foo":["a",2,"c"]})", ""},
    {"A.9 test a value: error", R"({"baz":"qux"})",
     R"([{"op":"test","path":"/baz","value":"bar"}])", "",
     "json patch operation 0 (test /baz): test failed: value differs"},
    {"A.10 add a nested member object", R"({"foo":"bar"})",
     R"([{"op":"add","path":"/child","value":{"grandchild":{}}}])",
     R"({"foo":"bar","child":{"grandchild":{}}})", ""},
    {"A.11 ignore unrecognized elements", R"({"foo":"bar"})",
     R"([{"op":"add","path":"/baz","value":"qux","xyz":123}])", R"({"foo":"bar","baz":"qux"})", ""},
    {"A.12 add to a nonexistent target", R"({"foo":"bar"})",
     R"([{"op":"add","path":"/baz/bat","value":"qux"}])", "",
     "json patch operation 0 (add /baz/bat): parent path not found"},
    {"A.14 ~ escape ordering", R"({"/":9,"~1":10})", R"([{"op":"test","path":"/~01","value":10}])",
     R"({"/":9,"~1":10})", ""},
    {"A.15 comparing strings and numbers", R"({"/":9,"~1":10})",
     R"([{"op":"test","path":"/~01","value":"10"}])", "",
     "json patch operation 0 (test /~01): test failed: value differs"},
    {"A.16 add an array value", R"({"foo":["bar"]})",
     R"([{"op":"add","path":"/foo/-","value":["abc","def"]}])", R"({"foo":["bar",["abc","def"]]})",
     ""},
    // add.
    {"add at the root is refused", R"({"a":1})", R"([{"op":"add","path":"","value":[1]}])", "",
     "json patch operation 0 (add ): path not found"},
    {"add replaces an existing member", R"({"a":1,"b":2})",
     R"([{"op":"add","path":"/a","value":{"x":null}}])", R"({"a":{"x":null},"b":2})", ""},
    {"add at index == size appends", R"({"a":[1,2]})", R"([{"op":"add","path":"/a/2","value":3}])",
     R"({"a":[1,2,3]})", ""},
    {"add at index 0 prepends", R"({"a":[1,2]})", R"([{"op":"add","path":"/a/0","value":0}])",
     R"({"a":[0,1,2]})", ""},
    {"add past the end", R"({"a":[1,2]})", R"([{"op":"add","path":"/a/3","value":3}])", "",
     "json patch operation 0 (add /a/3): array index 3 out of range"},
    {"add with a leading zero", R"({"a":[1,2]})", R"([{"op":"add","path":"/a/01","value":3}])",
     R"({"a":[1,3,2]})", ""},
    {"add with a non-numeric index", R"({"a":[1]})", R"([{"op":"add","path":"/a/x","value":3}])",
     "", "json patch operation 0 (add /a/x): invalid array index \"x\""},
    {"- is a member name in an object", R"({"a":{}})", R"([{"op":"add","path":"/a/-","value":1}])",
     R"({"a":{"-":1}})", ""},
    {"add under a scalar", R"({"a":1})", R"([{"op":"add","path":"/a/b","value":2}])", "",
     "json patch operation 0 (add /a/b): parent path not found"},
    {"add the empty member name", R"({})", R"([{"op":"add","path":"/","value":1}])", R"({"":1})",
     ""},
    {"pointer escapes", R"({})",
     R"([{"op":"add","path":"/a~1b","value":1},{"op":"add","path":"/m~0n","value":2}])",
     R"({"a/b":1,"m~n":2})", ""},
    // remove.
    {"remove keeps member order", R"({"a":1,"b":2,"c":3})", R"([{"op":"remove","path":"/b"}])",
     R"({"a":1,"c":3})", ""},
    {"remove a missing member", R"({"a":1})", R"([{"op":"remove","path":"/b"}])", "",
     "json patch operation 0 (remove /b): path not found"},
    {"remove the last element", R"([1,2,3])", R"([{"op":"remove","path":"/2"}])", "[1,2]", ""},
    {"remove with -", R"([1,2])", R"([{"op":"remove","path":"/-"}])", "",
     "json patch operation 0 (remove /-): invalid array index \"-\""},
    {"remove past the end", R"([1,2])", R"([{"op":"remove","path":"/2"}])", "",
     "json patch operation 0 (remove /2): array index 2 out of range"},
    {"remove with a leading zero", R"([1,2])", R"([{"op":"remove","path":"/00"}])", "[2]", ""},
    {"remove the root", R"({"a":1})", R"([{"op":"remove","path":""}])", "",
     "json patch operation 0 (remove ): path not found"},
    // replace.
    {"replace a missing path names the operation", R"({"spec":{"y":1}})",
     R"([{"op":"test","path":"/spec/y","value":1},{"op":"add","path":"/spec/z","value":2},
        {"op":"replace","path":"/status/x","value":3}])",
     "", "json patch operation 2 (replace /status/x): path not found"},
    {"replace the root", R"({"a":1})", R"([{"op":"replace","path":"","value":{"b":2}}])",
     R"({"b":2})", ""},
    {"replace an element", R"([1,2])", R"([{"op":"replace","path":"/1","value":[3]}])", "[1,[3]]",
     ""},
    {"replace with -", R"([1,2])", R"([{"op":"replace","path":"/-","value":3}])", "",
     "json patch operation 0 (replace /-): invalid array index \"-\""},
    // move.
    {"move into its own child", R"({"a":{"b":{}}})",
     R"([{"op":"move","from":"/a","path":"/a/b/c"}])", "",
     "json patch operation 0 (move /a/b/c): parent path not found"},
    {"move to a sibling with a common prefix", R"({"a":1})",
     R"([{"op":"move","from":"/a","path":"/ab"}])", R"({"ab":1})", ""},
    {"move onto itself", R"({"a":{"b":1}})", R"([{"op":"move","from":"/a","path":"/a"}])",
     R"({"a":{"b":1}})", ""},
    {"move replaces the target", R"({"a":1,"b":2})", R"([{"op":"move","from":"/a","path":"/b"}])",
     R"({"b":1})", ""},
    {"move from a missing path", R"({"a":1})", R"([{"op":"move","from":"/x","path":"/b"}])", "",
     "json patch operation 0 (move /b): from path not found"},
    {"move to the root", R"({"a":{"b":1}})", R"([{"op":"move","from":"/a","path":""}])", "",
     "json patch operation 0 (move ): path not found"},
    {"move an element to the end", R"([1,2,3])", R"([{"op":"move","from":"/0","path":"/-"}])",
     "[2,3,1]", ""},
    // copy.
    {"copy is deep", R"({"a":{"b":[1]}})",
     R"([{"op":"copy","from":"/a","path":"/c"},{"op":"add","path":"/c/b/-","value":2}])",
     R"({"a":{"b":[1]},"c":{"b":[1,2]}})", ""},
    {"copy into its own child", R"({"a":{"b":1}})", R"([{"op":"copy","from":"/a","path":"/a/c"}])",
     R"({"a":{"b":1,"c":{"b":1}}})", ""},
    {"copy from a missing parent", R"({})", R"([{"op":"copy","from":"/x/a","path":"/y"}])", "",
     "json patch operation 0 (copy /y): from path not found"},
    // test.
    {"test is deep and order-insensitive", R"({"a":{"x":1,"y":[1,{"z":null}]}})",
     R"([{"op":"test","path":"/a","value":{"y":[1,{"z":null}],"x":1}}])",
     R"({"a":{"x":1,"y":[1,{"z":null}]}})", ""},
    {"test array length", R"({"a":[1,2]})", R"([{"op":"test","path":"/a","value":[1]}])", "",
     "json patch operation 0 (test /a): test failed: value differs"},
    {"test extra member", R"({"a":{"x":1}})",
     R"([{"op":"test","path":"/a","value":{"x":1,"y":2}}])", "",
     "json patch operation 0 (test /a): test failed: value differs"},
    {"test null vs false", R"({"a":null})", R"([{"op":"test","path":"/a","value":false}])", "",
     "json patch operation 0 (test /a): test failed: value differs"},
    {"test -1 vs a huge unsigned", R"({"a":-1})",
     R"([{"op":"test","path":"/a","value":18446744073709551615}])", "",
     "json patch operation 0 (test /a): test failed: value differs"},
    {"test the root", R"([1])", R"([{"op":"test","path":"","value":[1]}])", "[1]", ""},
    {"test a missing parent", R"({})", R"([{"op":"test","path":"/a/b","value":null}])", "",
     "json patch operation 0 (test /a/b): path not found"},
    {"a failed test stops the patch", R"({"a":1})",
     R"([{"op":"test","path":"/a","value":2},{"op":"remove","path":"/a"}])", "",
     "json patch operation 0 (test /a): test failed: value differs"},
    // Malformed patches.
    {"empty patch", R"({"a":1})", "[]", R"({"a":1})", ""},
    {"patch is not an array", R"({})", R"({"op":"add"})", "",
     "json patch must be an array of operations"},
    {"operation is not an object", R"({})", R"([1])", "",
     "json patch operation 0: operation is not an object"},
    {"missing op", R"({})", R"([{"path":"/a"}])", "",
     "json patch operation 0: missing or non-string \"op\""},
    {"missing path", R"({})", R"([{"op":"add","value":1}])", "",
     "json patch operation 0: missing or non-string \"path\""},
    {"unknown op", R"({})", R"([{"op":"merge","path":"/a"}])", "",
     "json patch operation 0 (merge /a): unknown operation \"merge\""},
    {"op is case-sensitive", R"({})", R"([{"op":"Add","path":"/a","value":1}])", "",
     "json patch operation 0 (Add /a): unknown operation \"Add\""},
    {"missing from", R"({})", R"([{"op":"move","path":"/a"}])", "",
     "json patch operation 0 (move /a): missing or non-string \"from\""},
    {"path without a '/'", R"({"a":1})", R"([{"op":"replace","path":"a","value":1}])", "",
     "json patch operation 0 (replace a): path not found"},
    {"from without a '/'", R"({})", R"([{"op":"copy","from":"x","path":"/a"}])", "",
     "json patch operation 0 (copy /a): from path not found"},
};

void expect_patches(const std::vector<PatchCase>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    rapidjson::Document doc = parse_json(c.document);
    rapidjson::Document patch = parse_json(c.patch);
    Status status = apply_json_patch(doc, patch);
    if (!c.error.empty()) {
      ASSERT_FALSE(status.ok()) << "patched to " << to_json(doc);
      EXPECT_EQ(status.error().message, c.error);
      continue;
    }
    ASSERT_TRUE(status.ok()) << status.error().message;
    EXPECT_EQ(to_json(doc), compact(c.result));
  }
}

TEST(JsonPatchTest, Apply) { expect_patches(kJsonPatchCases); }

// Where kube-apiserver v1.26 departs from RFC 6902: it applies JSON patches with
// github.com/evanphx/json-patch v4.12.0 (handlers/patch.go: jsonpatch.DecodePatch, then
// patchObj.Apply with the package defaults, SupportNegativeIndices = true). Each case names the
// function of json-patch's patch.go (v4.12.0, vendored by kubernetes v1.26 under
// vendor/github.com/evanphx/json-patch/) that decides it. The journal replays these patches to
// the apiserver, so the offline result must be the one the apiserver computes.
const std::vector<PatchCase> kApiserverCases = {
    // Patch.replace: con.get(key) of a partialDoc returns (nil, nil) for a missing key, so the
    // check passes and con.set adds the member.
    {"replace of a missing member adds it", R"({"spec":{"y":1}})",
     R"([{"op":"replace","path":"/spec/x","value":3}])", R"({"spec":{"y":1,"x":3}})", ""},
    // partialArray.get: an array's missing index is an error.
    {"replace past an array's end", R"({"a":[1]})", R"([{"op":"replace","path":"/a/1","value":3}])",
     "", "json patch operation 0 (replace /a/1): array index 1 out of range"},
    // partialArray.add: idx < 0 counts back from len(ary) = size + 1, so -1 appends.
    {"add at -1 appends", R"({"a":[1,2]})", R"([{"op":"add","path":"/a/-1","value":3}])",
     R"({"a":[1,2,3]})", ""},
    {"add at -3 prepends to two", R"({"a":[1,2]})", R"([{"op":"add","path":"/a/-3","value":0}])",
     R"({"a":[0,1,2]})", ""},
    {"add before -(size + 1)", R"({"a":[1,2]})", R"([{"op":"add","path":"/a/-4","value":0}])", "",
     "json patch operation 0 (add /a/-4): array index -4 out of range"},
    // strconv.Atoi takes a '+' sign.
    {"add at +1", R"({"a":[1,2]})", R"([{"op":"add","path":"/a/+1","value":9}])",
     R"({"a":[1,9,2]})", ""},
    // partialArray.remove, .set and .get count a negative index back from len.
    {"remove -1 removes the last", R"({"a":[1,2,3]})", R"([{"op":"remove","path":"/a/-1"}])",
     R"({"a":[1,2]})", ""},
    {"remove -3 of two", R"({"a":[1,2]})", R"([{"op":"remove","path":"/a/-3"}])", "",
     "json patch operation 0 (remove /a/-3): array index -3 out of range"},
    {"replace -2", R"({"a":[1,2]})", R"([{"op":"replace","path":"/a/-2","value":7}])",
     R"({"a":[7,2]})", ""},
    {"test -1 and traverse -1", R"({"a":[{"b":1},{"b":2}]})",
     R"([{"op":"test","path":"/a/-1","value":{"b":2}},{"op":"add","path":"/a/-1/c","value":3}])",
     R"({"a":[{"b":1},{"b":2,"c":3}]})", ""},
    // Operation.value returns a nil node for a missing "value", which marshals as null.
    {"add without value adds null", R"({})", R"([{"op":"add","path":"/a"}])", R"({"a":null})", ""},
    {"replace without value sets null", R"({"a":1})", R"([{"op":"replace","path":"/a"}])",
     R"({"a":null})", ""},
    // Patch.test: a missing member and a null one are both a nil node, equal to a null value.
    {"test a missing member against null", R"({"a":1})",
     R"([{"op":"test","path":"/b","value":null}])", R"({"a":1})", ""},
    {"test a null member against null", R"({"a":null})",
     R"([{"op":"test","path":"/a","value":null}])", R"({"a":null})", ""},
    {"test a missing member against a value", R"({})", R"([{"op":"test","path":"/a","value":1}])",
     "", "json patch operation 0 (test /a): test failed: value differs"},
    // Patch.test: op.value().raw on a nil node panics (the apiserver answers 500): refused.
    {"test a missing member without value", R"({})", R"([{"op":"test","path":"/a"}])", "",
     "json patch operation 0 (test /a): missing \"value\""},
    {"test a present member without value", R"({"a":1})", R"([{"op":"test","path":"/a"}])", "",
     "json patch operation 0 (test /a): test failed: value differs"},
    // lazyNode.equal compares scalars as compact JSON text.
    {"test 1 against 1.0", R"({"a":1})", R"([{"op":"test","path":"/a","value":1.0}])", "",
     "json patch operation 0 (test /a): test failed: value differs"},
    // Patch.copy: con.get of a missing key is nil, deepCopy(nil) is nil, added as null.
    {"copy from a missing member adds null", R"({"a":1})",
     R"([{"op":"copy","from":"/x","path":"/y"}])", R"({"a":1,"y":null})", ""},
    // Patch.replace of "": a non-container value returns errors.Wrapf(nil, ...), i.e. nil.
    {"replace the root with a scalar does nothing", R"({"a":1})",
     R"([{"op":"replace","path":"","value":"s"}])", R"({"a":1})", ""},
    {"replace the root without value", R"({"a":1})", R"([{"op":"replace","path":""}])", "",
     "json patch operation 0 (replace ): missing \"value\""},
    // findObject: strings.Split drops the part before the first '/'; decodePatchKey leaves a '~'
    // that starts no escape.
    {"the text before the first / is ignored", R"({"b":1})",
     R"([{"op":"replace","path":"a/b","value":2}])", R"({"b":2})", ""},
    {"a ~ starting no escape stays", R"({})",
     R"([{"op":"add","path":"/a~2","value":1},{"op":"add","path":"/b~","value":2}])",
     R"({"a~2":1,"b~":2})", ""},
    // findObject: a null parent is a nil node: not found.
    {"a null parent", R"({"a":null})", R"([{"op":"add","path":"/a/b","value":1}])", "",
     "json patch operation 0 (add /a/b): parent path not found"},
    // Patch.move: con.remove fails for a missing key, even onto itself.
    {"move a missing member onto itself", R"({})", R"([{"op":"move","from":"/x","path":"/x"}])", "",
     "json patch operation 0 (move /x): from path not found"},
    // Go decodes an operation into a map: the last of duplicate members wins.
    {"duplicate members: the last wins", R"({})",
     R"([{"op":"test","op":"add","path":"/x","path":"/a","value":1,"value":2}])", R"({"a":2})", ""},
};

TEST(JsonPatchTest, AsKubeApiserverApplies) { expect_patches(kApiserverCases); }

// Values are copied into the target's allocator: a patch parsed in situ (whose strings point into
// the caller's buffer) can be freed right after the call.
TEST(JsonPatchTest, PatchBufferMayBeFreedAfterApply) {
  rapidjson::Document doc = parse_json(R"({"a":"keep"})");
  {
    std::string buffer = R"([{"op":"add","path":"/b","value":{"name":"from-patch","l":["x"]}}])";
    rapidjson::Document patch;
    patch.ParseInsitu(buffer.data());
    ASSERT_FALSE(patch.HasParseError());
    ASSERT_TRUE(apply_json_patch(doc, patch).ok());
    std::fill(buffer.begin(), buffer.end(), 'X');
  }
  EXPECT_EQ(to_json(doc), R"({"a":"keep","b":{"name":"from-patch","l":["x"]}})");
}

// kube-apiserver's limits: at most 10000 operations, in its words.
TEST(JsonPatchTest, MoreThanTenThousandOperationsAreRefused) {
  std::string ops;
  for (int i = 0; i < 10000; ++i) ops += R"({"op":"test","path":"/a","value":1},)";
  rapidjson::Document doc = parse_json(R"({"a":1})");
  EXPECT_TRUE(apply_json_patch(doc, parse_json("[" + ops.substr(0, ops.size() - 1) + "]")).ok());
  const Status status =
      apply_json_patch(doc, parse_json("[" + ops + R"({"op":"remove","path":"/a"}])"));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message,
            "The allowed maximum operations in a JSON patch is 10000, got 10001");
  EXPECT_EQ(to_json(doc), R"({"a":1})");  // refused before any operation
}

// Each copy of /d into itself doubles the document: 1 KiB becomes 2^64 KiB in a 64-op patch. The
// apiserver's json-patch refuses once copies added 3 MiB.
TEST(JsonPatchTest, CopiesStopAtThreeMebibytesOfGrowth) {
  rapidjson::Document doc = parse_json(R"({"d":[")" + std::string(1024, 'x') + R"("]})");
  std::string ops;
  for (int i = 0; i < 64; ++i)
    ops += std::string(i ? "," : "") + R"({"op":"copy","from":"/d","path":"/d/-"})";
  const Status status = apply_json_patch(doc, parse_json("[" + ops + "]"));
  ASSERT_FALSE(status.ok());
  // Copy i adds 2^i * 1029 - 1 bytes: copies 0..10 add about 2.1 MiB, copy 11 4.2 MiB in all.
  EXPECT_THAT(
      status.error().message,
      ::testing::MatchesRegex(R"re(json patch operation 11 \(copy /d/-\): Unable to complete )re"
                              "the copy, the accumulated size increase of copy is [0-9]+, "
                              "exceeding the limit 3145728"));
  EXPECT_LT(to_json(doc).size(), 4u << 20);
}

std::string nested_arrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// The result is bounded like a parse, since whoever reads it next recurses.
TEST(JsonPatchTest, AResultNestedPastTheParseBoundIsRefused) {
  std::string path;
  for (int i = 0; i < 600; ++i) path += "/0";
  rapidjson::Document doc = parse_json(R"({"a":)" + nested_arrays(601) + "}");
  const std::string add =
      R"([{"op":"add","path":"/a)" + path + R"(/-","value":)" + nested_arrays(500) + "}]";
  Status status = apply_json_patch(doc, parse_json(add));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, "the patched document is nested more than 1000 levels deep");
  doc = parse_json(R"({"a":)" + nested_arrays(601) + "}");
  status = apply_json_patch(
      doc, parse_json(R"([{"op":"copy","from":"/a","path":"/a)" + path + R"(/-"}])"));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, "json patch operation 0 (copy /a" + path +
                                        "/-): the copy would nest the document more than 1000 "
                                        "levels deep");
}

const std::vector<PatchCase> kMergePatchCases = {
    // RFC 7386 appendix A, every row.
    {"A1", R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})", ""},
    {"A2", R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})", ""},
    {"A3", R"({"a":"b"})", R"({"a":null})", R"({})", ""},
    {"A4", R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})", ""},
    {"A5", R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})", ""},
    {"A6", R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})", ""},
    {"A7", R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})", R"({"a":{"b":"d"}})", ""},
    {"A8", R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})", ""},
    {"A9", R"(["a","b"])", R"(["c","d"])", R"(["c","d"])", ""},
    {"A10", R"({"a":"b"})", R"(["c"])", R"(["c"])", ""},
    {"A11", R"({"a":"foo"})", "null", "null", ""},
    {"A12", R"({"a":"foo"})", R"("bar")", R"("bar")", ""},
    {"A13", R"({"e":null})", R"({"a":1})", R"({"e":null,"a":1})", ""},
    {"A14", R"([1,2])", R"({"a":"b","c":null})", R"({"a":"b"})", ""},
    {"A15", R"({})", R"({"a":{"bb":{"ccc":null}}})", R"({"a":{"bb":{}}})", ""},
    // Beyond the appendix.
    {"nested merge keeps siblings", R"({"metadata":{"name":"p","labels":{"a":"1","b":"2"}}})",
     R"({"metadata":{"labels":{"b":null,"c":"3"}}})",
     R"({"metadata":{"name":"p","labels":{"a":"1","c":"3"}}})", ""},
    {"null inside an array is kept", R"({})", R"({"a":[null,{"b":null}]})",
     R"({"a":[null,{"b":null}]})", ""},
    {"object patch over a scalar member", R"({"a":"s"})", R"({"a":{"b":1,"c":null}})",
     R"({"a":{"b":1}})", ""},
    {"deleting a missing member", R"({"a":1})", R"({"x":null})", R"({"a":1})", ""},
    {"empty patch", R"({"a":1})", R"({})", R"({"a":1})", ""},
    {"object patch over a scalar document", R"(7)", R"({"a":1})", R"({"a":1})", ""},
};

TEST(MergePatchTest, Apply) {
  for (const auto& c : kMergePatchCases) {
    SCOPED_TRACE(c.name + ": " + c.document + " + " + c.patch);
    rapidjson::Document doc = parse_json(c.document);
    rapidjson::Document patch = parse_json(c.patch);
    Status status = apply_merge_patch(doc, patch);
    ASSERT_TRUE(status.ok()) << status.error().message;
    EXPECT_EQ(to_json(doc), compact(c.result));
  }
}

TEST(MergePatchTest, DuplicateMembersAreAllDeleted) {
  rapidjson::Document doc = parse_json(R"({"a":1,"b":2,"a":3})");
  ASSERT_TRUE(apply_merge_patch(doc, parse_json(R"({"a":null})")).ok());
  EXPECT_EQ(to_json(doc), R"({"b":2})");
}

TEST(MergePatchTest, OfAPatchsDuplicateNamesOnlyTheLastIsApplied) {
  rapidjson::Document doc = parse_json(R"({"a":{"x":1},"b":1})");
  ASSERT_TRUE(
      apply_merge_patch(doc, parse_json(R"({"a":{"y":1},"b":null,"a":{"z":1},"b":2})")).ok());
  EXPECT_EQ(to_json(doc), R"({"a":{"x":1,"z":1},"b":2})");
}

// Found by json_patch_fuzz: applying every duplicate in turn deleted and re-added "b", so the
// second application moved it behind "a" and the patch was not idempotent.
TEST(MergePatchTest, APatchWithDuplicateNamesIsIdempotent) {
  rapidjson::Document patch =
      parse_json(R"({"b":{"b":null,"b":{"b":[1],"a":1,"b":null},"a":{"a":[1],"b":null,"a":1}}})");
  rapidjson::Document doc = parse_json("null");
  ASSERT_TRUE(apply_merge_patch(doc, patch).ok());
  const std::string once = to_json(doc);
  EXPECT_EQ(once, R"({"b":{"b":{"a":1},"a":{"a":1}}})");
  ASSERT_TRUE(apply_merge_patch(doc, patch).ok());
  EXPECT_EQ(to_json(doc), once);
}

TEST(MergePatchTest, RefusesPathologicalNesting) {
  std::string deep;
  for (int i = 0; i < 1200; ++i) deep += R"({"a":)";
  deep += "1";
  for (int i = 0; i < 1200; ++i) deep += "}";
  // Deeper than the hub's parsers accept: built with RapidJSON's own, unbounded one.
  rapidjson::Document patch;
  patch.Parse(deep.c_str(), deep.size());
  ASSERT_FALSE(patch.HasParseError());
  rapidjson::Document doc = parse_json("{}");
  Status status = apply_merge_patch(doc, patch);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, "merge patch is nested too deeply");
  EXPECT_EQ(to_json(doc), "{}");
}

}  // namespace
}  // namespace yurthub::kube
