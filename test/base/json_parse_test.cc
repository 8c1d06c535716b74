// Tests for base/json_parse.h: the in-situ parse leaves the caller's text untouched and yields
// strings with escapes decoded (in the scratch copy); bad JSON is an error; nesting is bounded at
// kMaxJsonDepth (1 MiB of '[' is an error, not a stack overflow) and a document at the bound
// survives the recursive walks; append_json writes compact JSON that parses back to the same value.
#include "base/json_parse.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace yurthub::base {
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
  const std::string long_text =
      R"({"s":")" + std::string(40, 'x') + R"(\n)" + std::string(40, 'y') + "\"}";
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

TEST(JsonParse, ParseJsonCopiesStringsAndReportsErrors) {
  rapidjson::Document doc;
  {
    const std::string text = R"({"a":["x",1]})";
    ASSERT_TRUE(parse_json(text, doc));
  }  // the text is gone; the document's strings are its own
  EXPECT_EQ(to_json(doc), R"({"a":["x",1]})");
  const Status bad = parse_json(R"({"a":})", doc);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "invalid JSON at byte 5: Invalid value.");
  EXPECT_TRUE(doc.IsNull());  // not the previous document
  EXPECT_FALSE(parse_json(R"({"a":1} x)", doc));
  // RapidJSON's reader stops at a NUL byte as at the end: what follows one is not ignored.
  using namespace std::string_literals;
  std::string scratch;
  EXPECT_FALSE(parse_json("{}\0{"s, doc));
  EXPECT_FALSE(parse_insitu("{}\0{"s, scratch, doc));
  EXPECT_TRUE(parse_json("{} \n"s, doc));
  // Nor is anything before the value: a byte order mark, or part of one, as Go's decoder says.
  for (const std::string& bom : {"\xEF\xBB\xBF{}"s, "\xBB{}"s}) {
    EXPECT_FALSE(parse_json(bom, doc));
    EXPECT_FALSE(parse_insitu(bom, scratch, doc));
  }
  // RapidJSON reads 2e308 as infinity, which its writer cannot write: refused, as by Go (1e400
  // is RapidJSON's own error).
  for (const char* huge : {"2e308", "[-2e308]", R"({"a":1e400})"}) {
    EXPECT_FALSE(parse_json(huge, doc)) << huge;
    EXPECT_FALSE(parse_insitu(huge, scratch, doc)) << huge;
  }
  const Status infinite = parse_json("[-2e308]", doc);
  ASSERT_FALSE(infinite);
  EXPECT_EQ(infinite.error().message, "invalid JSON at byte 1: a number too large for a double");
  ASSERT_TRUE(parse_json("1.7976931348623157e308", doc));
  EXPECT_EQ(to_json(doc), "1.7976931348623157e308");
}

std::string nested(unsigned depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonParse, NestingPastTheBoundIsAnErrorNotAStackOverflow) {
  rapidjson::Document doc;
  std::string scratch;
  const std::string brackets(1u << 20, '[');  // 1 MiB of '[': a recursive parse overflows
  std::string members;
  while (members.size() < (1u << 20)) members += R"({"a":)";
  for (const std::string& text :
       {brackets, members, nested(kMaxJsonDepth + 1), R"({"a":)" + nested(kMaxJsonDepth) + "}"}) {
    const Status parsed = parse_json(text, doc);
    ASSERT_FALSE(parsed);
    EXPECT_EQ(parsed.error().message, "JSON nested more than 1000 levels deep");
    EXPECT_TRUE(doc.IsNull());
    EXPECT_FALSE(parse_insitu(text, scratch, doc));
  }
  // Objects count like arrays, and a key with a '[' in it is no nesting.
  std::string objects;
  for (unsigned i = 0; i < kMaxJsonDepth; ++i) objects += R"({"[":)";
  objects += "1" + std::string(kMaxJsonDepth, '}');
  EXPECT_TRUE(parse_json(objects, doc));
}

TEST(JsonParse, ADocumentAtTheBoundSurvivesTheRecursiveWalks) {
  rapidjson::Document doc;
  std::string scratch;
  const std::string text = nested(kMaxJsonDepth);
  ASSERT_TRUE(parse_insitu(text, scratch, doc));
  ASSERT_TRUE(parse_json(text, doc));
  rapidjson::Document copy;
  copy.CopyFrom(doc, copy.GetAllocator());
  EXPECT_EQ(to_json(copy), text);
}

// Found by json_parse_fuzz: read a few ULP off (RapidJSON's default precision), a long number
// changed every time the hub wrote it and read it back; read in RapidJSON's full precision, 0e308
// was -6e-269.
TEST(JsonParse, NumbersAreReadCorrectlyRounded) {
  const std::string digits =
      "111111111111111111111113111111111111111111111111111111111111111111111111111111111111111111"
      "1111111111131111111111111111111111111111111111111111111111111111111111111111011111111110";
  rapidjson::Document doc;
  ASSERT_TRUE(parse_json(digits, doc));
  EXPECT_EQ(doc.GetDouble(), std::strtod(digits.c_str(), nullptr));  // glibc rounds correctly
  const std::string written = to_json(doc);
  ASSERT_TRUE(parse_json(written, doc));
  EXPECT_EQ(to_json(doc), written);
  const struct {
    const char* text;
    const char* json;  // what to_json writes after the parse
  } cases[] = {
      {"0e308", "0.0"},
      {"-0e-81", "-0.0"},
      {"1e-400", "0.0"},
      {"5e-324", "5e-324"},
      {"0.1", "0.1"},
      {"-0", "0"},
      {"12", "12"},
      {"-9223372036854775808", "-9223372036854775808"},
      {"18446744073709551615", "18446744073709551615"},
      {"18446744073709551616", "18446744073709553000.0"},
  };
  std::string scratch;
  for (const auto& c : cases) {
    ASSERT_TRUE(parse_json(c.text, doc)) << c.text;
    EXPECT_EQ(to_json(doc), c.json) << c.text;
    ASSERT_TRUE(parse_insitu(c.text, scratch, doc)) << c.text;
    EXPECT_EQ(to_json(doc), c.json) << c.text;
  }
  ASSERT_TRUE(parse_json(R"({"port":8080,"neg":-1,"big":4294967296})", doc));
  EXPECT_TRUE(doc["port"].IsInt());
  EXPECT_TRUE(doc["neg"].IsInt());
  EXPECT_TRUE(doc["big"].IsUint64() && !doc["big"].IsUint());
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
}  // namespace yurthub::base
