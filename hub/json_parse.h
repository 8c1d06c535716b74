// JSON parsing and writing shared by the hub, the filters and the cache: an in-situ parse of a
// scratch copy, which copies no strings and takes RapidJSON's SIMD paths (RAPIDJSON_SSE2,
// CMakeLists.txt), for the filter chain's hot path over every object of a list or watch; and
// compact writing through rapidjson::StringBuffer, which takes them for output.
#pragma once

#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace yurthub::hub {

// Parses `text` into `doc` in situ in `scratch`, which receives a copy of it. The strings of
// `doc` point into `scratch`: leave it untouched while `doc` is used. Returns false on a parse
// error. (A NUL byte would end an in-situ parse early; the framers never pass one through,
// since JSON allows none outside strings and only escaped inside them.)
inline bool parse_insitu(std::string_view text, std::string& scratch, rapidjson::Document& doc) {
  scratch.assign(text);
  doc.ParseInsitu(scratch.data());
  return !doc.HasParseError();
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

}  // namespace yurthub::hub
