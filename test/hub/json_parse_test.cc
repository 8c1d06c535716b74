// Tests for hub/json_parse.h: the in-situ parse leaves the caller's text untouched and yields
// strings with escapes decoded (in the scratch copy); bad JSON is an error; append_json writes
// compact JSON that parses back to the same value.
#include "hub/json_parse.h"

#include <gtest/gtest.h>

namespace yurthub::hub {
namespace {

TEST(JsonParse, InsituParseWorksOnACopyAndDecodesEscapes) {
  const std::string text = R"({"name":"a\"b\u00e9","n":[1,2.5,true,null],"o":{}})";
  std::string scratch;
  rapidjson::Document doc;
  ASSERT_TRUE(parse_insitu(text, scratch, doc));
  EXPECT_EQ(text, R"({"name":"a\"b\u00e9","n":[1,2.5,true,null],"o":{}})");  // untouched
  EXPECT_EQ(std::string(doc["name"].GetString(), doc["name"].GetStringLength()), "a\"b\xc3\xa9");
  EXPECT_EQ(doc["n"].Size(), 4u);
  // A long string, longer than one 16-byte SIMD block, with an escape past the first block.
  const std::string long_text = R"({"s":")" + std::string(40, 'x') + R"(\n)" + std::string(40, 'y') + "\"}";
  ASSERT_TRUE(parse_insitu(long_text, scratch, doc));
  EXPECT_EQ(doc["s"].GetStringLength(), 81u);
}

TEST(JsonParse, BadJsonIsAnError) {
  std::string scratch;
  rapidjson::Document doc;
  EXPECT_FALSE(parse_insitu(R"({"a":)", scratch, doc));
  EXPECT_FALSE(parse_insitu(R"({"a":1}{"b":2})", scratch, doc));
  EXPECT_FALSE(parse_insitu("", scratch, doc));
}

TEST(JsonParse, AppendJsonWritesCompactJsonAfterWhatIsThere) {
  std::string scratch;
  rapidjson::Document doc;
  ASSERT_TRUE(parse_insitu(R"({ "a" : [ 1, "x\ty" ] })", scratch, doc));
  std::string out = "prefix:";
  append_json(doc, &out);
  EXPECT_EQ(out, R"(prefix:{"a":[1,"x\ty"]})");
}

}  // namespace
}  // namespace yurthub::hub
