// Tests for kube/strategic_merge.cc and kube/merge_patch_diff.cc, driven by the cases in
// test/testdata/patches/: strategic_merge.json (Pod, Node, Lease and unknown-kind objects, two of
// them captured from a real kube-apiserver, each with the expected document or an error substring)
// and merge_patch_diff.json (original, modified, expected merge patch). Documents are compared with
// RapidJSON's ==: object members in any order, array elements in order, numbers by value.
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "kube/json_patch.h"
#include "kube/merge_patch_diff.h"
#include "kube/strategic_merge.h"
#include "test/base/json_test_support.h"

namespace yurthub::kube {
namespace {

using ::yurthub::test_support::to_json;

using ::testing::HasSubstr;

rapidjson::Document load_cases(const std::string& name) {
  std::ifstream in(std::string(YURTHUB_TESTDATA_DIR) + "/patches/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  doc.Parse(text.str().c_str(), text.str().size());
  EXPECT_FALSE(doc.HasParseError())
      << name << " is not JSON (offset " << doc.GetErrorOffset() << ")";
  if (!doc.IsArray()) doc.SetArray();
  return doc;
}

std::string_view string_member(const rapidjson::Value& object, const char* name) {
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

// Compact JSON, for failure messages.
rapidjson::Document copy_of(const rapidjson::Value& value) {
  rapidjson::Document doc;
  doc.CopyFrom(value, doc.GetAllocator());
  return doc;
}

// True if any member name below `v` starts with '$': a directive left in a result.
bool has_directive(const rapidjson::Value& v) {
  if (v.IsArray()) {
    for (const auto& e : v.GetArray()) {
      if (has_directive(e)) return true;
    }
  }
  if (v.IsObject()) {
    for (const auto& m : v.GetObject()) {
      if (m.name.GetString()[0] == '$' || has_directive(m.value)) return true;
    }
  }
  return false;
}

TEST(StrategicMergePatchTest, DataDrivenCases) {
  rapidjson::Document cases = load_cases("strategic_merge.json");
  EXPECT_GE(cases.Size(), 25u);
  for (const auto& c : cases.GetArray()) {
    SCOPED_TRACE(std::string(string_member(c, "name")));
    rapidjson::Document target = copy_of(c["original"]);
    Status applied = apply_strategic_merge_patch(target, c["patch"]);
    if (c.HasMember("error")) {
      ASSERT_FALSE(applied.ok()) << "no error; result: " << to_json(target);
      EXPECT_THAT(applied.error().message, HasSubstr(std::string(string_member(c, "error"))));
      continue;
    }
    ASSERT_TRUE(applied.ok()) << applied.error().message;
    EXPECT_TRUE(target == c["expected"])
        << "got:      " << to_json(target) << "\nexpected: " << to_json(c["expected"]);
    EXPECT_FALSE(has_directive(target)) << to_json(target);
  }
}

// create_merge_patch on every (original, result) pair above: a merge patch of the diff must
// rebuild the result, which is what the journal's three-way merge relies on.
TEST(StrategicMergePatchTest, MergePatchOfEachResultRebuildsIt) {
  rapidjson::Document cases = load_cases("strategic_merge.json");
  for (const auto& c : cases.GetArray()) {
    if (!c.HasMember("expected")) continue;
    SCOPED_TRACE(std::string(string_member(c, "name")));
    rapidjson::Document patch = create_merge_patch(c["original"], c["expected"]);
    rapidjson::Document rebuilt = copy_of(c["original"]);
    ASSERT_TRUE(apply_merge_patch(rebuilt, patch).ok());
    EXPECT_TRUE(rebuilt == c["expected"]) << "patch: " << to_json(patch);
  }
}

TEST(StrategicMergePatchTest, CopiesStringsOutOfThePatch) {
  rapidjson::Document target;
  target.Parse(R"({"kind":"Node","status":{"conditions":[{"type":"Ready","status":"False"}]}})");
  // Parsed in place, the patch's strings point into `buffer`, which is then overwritten.
  std::string buffer =
      R"({"metadata":{"labels":{"zone":"edge-a"}},"status":{"conditions":[)"
      R"({"type":"Ready","status":"True"},{"type":"MemoryPressure","status":"False"}]}})";
  rapidjson::Document patch;
  patch.ParseInsitu(buffer.data());
  ASSERT_FALSE(patch.HasParseError());
  ASSERT_TRUE(apply_strategic_merge_patch(target, patch).ok());
  std::fill(buffer.begin(), buffer.end(), 'x');
  EXPECT_EQ(
      to_json(target),
      R"({"kind":"Node","status":{"conditions":[{"type":"Ready","status":"True"},)"
      R"({"type":"MemoryPressure","status":"False"}]},"metadata":{"labels":{"zone":"edge-a"}}})");
}

TEST(StrategicMergePatchTest, RefusesPatchesNestedTooDeeply) {
  for (const char* open : {R"({"a":)", "["}) {
    std::string text = R"({"spec":)";
    for (int i = 0; i < 1002; ++i) text += open;
    text += "1";
    for (int i = 0; i < 1002; ++i) text += open[0] == '{' ? "}" : "]";
    text += "}";
    rapidjson::Document patch;
    patch.Parse(text.c_str());
    ASSERT_FALSE(patch.HasParseError());
    rapidjson::Document target;
    target.Parse(R"({"kind":"Pod"})");
    Status applied = apply_strategic_merge_patch(target, patch);
    ASSERT_FALSE(applied.ok()) << open;
    EXPECT_THAT(applied.error().message, HasSubstr("nested too deeply"));
  }
}

TEST(CreateMergePatchTest, DataDrivenCases) {
  rapidjson::Document cases = load_cases("merge_patch_diff.json");
  EXPECT_GE(cases.Size(), 8u);
  for (const auto& c : cases.GetArray()) {
    SCOPED_TRACE(std::string(string_member(c, "name")));
    rapidjson::Document patch = create_merge_patch(c["original"], c["modified"]);
    EXPECT_TRUE(patch == c["expected"])
        << "got:      " << to_json(patch) << "\nexpected: " << to_json(c["expected"]);
    rapidjson::Document rebuilt = copy_of(c["original"]);
    ASSERT_TRUE(apply_merge_patch(rebuilt, patch).ok());
    EXPECT_TRUE(rebuilt == c["modified"]) << "rebuilt: " << to_json(rebuilt);
  }
}

}  // namespace
}  // namespace yurthub::kube
