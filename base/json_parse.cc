// The bounded JSON parse; see json_parse.h. RapidJSON's reader checks the syntax and feeds a
// Document through a handler that counts nesting, stopping the parse before the reader recurses
// past kMaxJsonDepth, and converts numbers itself. Called on every thread that reads JSON
// (workers, the cache writer, informers).
#include "base/json_parse.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

namespace yurthub::base {
namespace {

using rapidjson::SizeType;

// Numbers reach the handler as text (kParseNumbersAsStringsFlag) and are converted here, with
// std::from_chars (correctly rounded), not by RapidJSON 1.1's strtod, which reads 2e308 as
// infinity (its writer then stops there, truncating the output), reads long numbers a few ULP off
// (so a number changed each time the hub wrote it back), and in full precision reads 0e308 as
// -6e-269. All three were found by the fuzz targets in test/fuzz.
constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag;

// Forwards SAX events to a Document (which builds the DOM); refuses to open a container past
// kMaxJsonDepth and numbers beyond a double's range. Returning false makes the reader stop with
// kParseErrorTermination.
class BoundedHandler {
 public:
  explicit BoundedHandler(rapidjson::Document& doc) : doc_(doc) {}

  bool Null() { return doc_.Null(); }
  bool Bool(bool b) { return doc_.Bool(b); }
  bool Int(int i) { return doc_.Int(i); }
  bool Uint(unsigned u) { return doc_.Uint(u); }
  bool Int64(std::int64_t i) { return doc_.Int64(i); }
  bool Uint64(std::uint64_t u) { return doc_.Uint64(u); }
  bool Double(double d) { return doc_.Double(d); }
  bool RawNumber(const char* s, SizeType n, bool) { return number(s, s + n); }
  bool String(const char* s, SizeType n, bool copy) { return doc_.String(s, n, copy); }
  bool Key(const char* s, SizeType n, bool copy) { return doc_.Key(s, n, copy); }
  bool StartObject() { return descend() && doc_.StartObject(); }
  bool EndObject(SizeType members) {
    --depth_;
    return doc_.EndObject(members);
  }
  bool StartArray() { return descend() && doc_.StartArray(); }
  bool EndArray(SizeType elements) {
    --depth_;
    return doc_.EndArray(elements);
  }

  bool too_deep() const { return too_deep_; }
  bool out_of_range() const { return out_of_range_; }

 private:
  bool descend() {
    if (++depth_ <= kMaxJsonDepth) return true;
    too_deep_ = true;
    return false;
  }

  // `[s, end)` is a number the reader has checked against JSON's grammar. Integers that fit 64
  // bits stay integers, as RapidJSON keeps them; everything else is a double.
  bool number(const char* s, const char* end) {
    if (std::string_view(s, end - s).find_first_of(".eE") == std::string_view::npos) {
      std::int64_t i = 0;
      std::uint64_t u = 0;
      if (*s == '-' && std::from_chars(s, end, i).ec == std::errc{}) return doc_.Int64(i);
      if (*s != '-' && std::from_chars(s, end, u).ec == std::errc{}) return doc_.Uint64(u);
    }
    double d = 0;
    if (std::from_chars(s, end, d).ec == std::errc::result_out_of_range) {
      // libstdc++ says "out of range" for underflow too, where Go (the apiserver) reads 0 or a
      // denormal: strtod does, and gives ±HUGE_VAL on overflow. (The hub never sets a locale.)
      d = std::strtod(std::string(s, end).c_str(), nullptr);
    }
    if (std::isfinite(d)) return doc_.Double(d);
    out_of_range_ = true;
    return false;
  }

  rapidjson::Document& doc_;
  unsigned depth_ = 0;
  bool too_deep_ = false;
  bool out_of_range_ = false;
};

// Parses all `size` bytes of `stream` into `doc`.
template <unsigned kStreamFlags, class Stream>
Status parse_stream(Stream& stream, std::size_t size, rapidjson::Document& doc) {
  rapidjson::Reader reader;
  BoundedHandler handler(doc);
  rapidjson::ParseResult result;
  // Populate() moves the finished root into `doc` only when the generator returns true.
  auto generate = [&](rapidjson::Document&) {
    result = reader.Parse<kFlags | kStreamFlags>(stream, handler);
    return !result.IsError();
  };
  doc.Populate(generate);
  // The reader takes a NUL byte for the end of the text: one after a complete value would
  // otherwise hide whatever follows it.
  if (!result.IsError() && stream.Tell() != size) {
    result.Set(rapidjson::kParseErrorDocumentRootNotSingular, stream.Tell());
  }
  if (!result.IsError()) return {};
  doc.SetNull();
  if (handler.too_deep()) {
    return make_error("JSON nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
  }
  if (handler.out_of_range()) {
    return make_error("invalid JSON at byte " + std::to_string(result.Offset()) +
                      ": a number too large for a double");
  }
  return make_error("invalid JSON at byte " + std::to_string(result.Offset()) + ": " +
                    rapidjson::GetParseError_En(result.Code()));
}

}  // namespace

Status parse_json(std::string_view text, rapidjson::Document& doc) {
  // Not through EncodedInputStream, as Document::Parse goes: it drops any of a BOM's three bytes
  // at the start, one by one (found by json_parse_fuzz: "\xBB{}" parsed as {}). Go refuses a BOM.
  rapidjson::MemoryStream stream(text.data(), text.size());
  return parse_stream<rapidjson::kParseDefaultFlags>(stream, text.size(), doc);
}

Status parse_insitu(std::string_view text, std::string& scratch, rapidjson::Document& doc) {
  scratch.assign(text);
  rapidjson::InsituStringStream stream(scratch.data());
  return parse_stream<rapidjson::kParseInsituFlag>(stream, text.size(), doc);
}

}  // namespace yurthub::base
