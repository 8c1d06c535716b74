// JSON parsing and writing shared by the hub, the filters and the cache. Every parse of JSON that
// came from a client, the apiserver or the store goes through parse_json() or parse_insitu(),
// which refuse nesting deeper than kMaxJsonDepth, so that 1 MiB of '[' in a request body or an
// upstream object is a clean error rather than a stack overflow. parse_insitu() parses a scratch
// copy in situ, which copies no strings and takes RapidJSON's SIMD paths (RAPIDJSON_SSE2,
// CMakeLists.txt), for the filter chain's hot path over every object of a list or watch; compact
// writing goes through rapidjson::StringBuffer, which takes them for output.
#pragma once

#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/result.h"

namespace yurthub::base {

// The deepest nesting of objects and arrays a parse accepts. Kubernetes' decoders stop at 10000
// levels; the hub stops lower because what it does with a parsed document recurses once per
// level: RapidJSON's parser itself (recursive; the bound is enforced before each descent), its
// Writer (to_json), CopyFrom, the patch, merge and selector code. One level costs up to a few
// hundred bytes of stack per walk in the ASan build, so 1000 levels stay far inside a thread's
// 8 MiB stack wherever the walks nest, while 10000 would not. Real objects nest a few dozen levels
// (a CRD's openAPIV3Schema a few hundred at most). Destroying a document does not recurse: its
// MemoryPoolAllocator frees chunks, not values.
inline constexpr unsigned kMaxJsonDepth = 1000;

// Parses `text` into `doc` (strings copied into `doc`'s allocator). On error (malformed JSON,
// bytes after the value, a NUL byte included, nesting deeper than kMaxJsonDepth, a number beyond
// a double's range) `doc` is null and the message says which. Use the result, not
// doc.HasParseError(), which this does not set.
Status parse_json(std::string_view text, rapidjson::Document& doc);

// Parses `text` into `doc` in situ in `scratch`, which receives a copy of it. The strings of
// `doc` point into `scratch`: leave it untouched while `doc` is used. Errors as parse_json().
Status parse_insitu(std::string_view text, std::string& scratch, rapidjson::Document& doc);

// The string member `name` of `object` (with its length: a NUL inside stays), or "" when
// `object` is not an object or the member is absent or not a string.
inline std::string string_member(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return {};
  auto it = object.FindMember(name);
  return it != object.MemberEnd() && it->value.IsString()
             ? std::string(it->value.GetString(), it->value.GetStringLength())
             : std::string();
}

// Appends the compact JSON of `value` to `out`.
inline void append_json(const rapidjson::Value& value, std::string* out) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  out->append(buffer.GetString(), buffer.GetSize());
}

// The compact JSON of `value`.
inline std::string to_json(const rapidjson::Value& value) {
  std::string out;
  append_json(value, &out);
  return out;
}

}  // namespace yurthub::base
