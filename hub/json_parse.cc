// The depth-bounded JSON parse; see json_parse.h. RapidJSON's reader feeds a Document through a
// handler that counts nesting and stops the parse, before the reader recurses, at the level past
// kMaxJsonDepth. Called on every thread that reads JSON (workers, the cache writer, informers).
#include "hub/json_parse.h"

#include <cmath>

#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

namespace yurthub::hub {
namespace {

using rapidjson::SizeType;

// Forwards SAX events to a Document (which builds the DOM) and refuses to open a container past
// kMaxJsonDepth, and numbers too large for a double. Returning false makes the reader stop with
// kParseErrorTermination.
class DepthBoundHandler {
 public:
  explicit DepthBoundHandler(rapidjson::Document& doc) : doc_(doc) {}

  bool Null() { return doc_.Null(); }
  bool Bool(bool b) { return doc_.Bool(b); }
  bool Int(int i) { return doc_.Int(i); }
  bool Uint(unsigned u) { return doc_.Uint(u); }
  bool Int64(std::int64_t i) { return doc_.Int64(i); }
  bool Uint64(std::uint64_t u) { return doc_.Uint64(u); }
  // RapidJSON 1.1 reads some numbers past DBL_MAX (e.g. 2e308) as infinity, which its writer
  // then refuses to write, truncating the output (found by test/fuzz/json_patch_fuzz.cc). Go's
  // decoder, and so the apiserver, refuses them.
  bool Double(double d) {
    if (std::isfinite(d)) return doc_.Double(d);
    out_of_range_ = true;
    return false;
  }
  bool RawNumber(const char* s, SizeType n, bool copy) { return doc_.RawNumber(s, n, copy); }
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

  rapidjson::Document& doc_;
  unsigned depth_ = 0;
  bool too_deep_ = false;
  bool out_of_range_ = false;
};

// Parses all `size` bytes of `stream` into `doc`.
template <unsigned kFlags, class Stream>
Status parse_stream(Stream& stream, std::size_t size, rapidjson::Document& doc) {
  rapidjson::Reader reader;
  DepthBoundHandler handler(doc);
  rapidjson::ParseResult result;
  // Populate() moves the finished root into `doc` only when the generator returns true.
  auto generate = [&](rapidjson::Document&) {
    result = reader.Parse<kFlags>(stream, handler);
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

// Full precision: RapidJSON's default may read a double a few ULP off, and the hub writes back
// what it read (found by json_parse_fuzz: a long number changed on every parse and write). The
// cost is lost in the noise (callgrind, filter_bench's list: +0.03% instructions).
constexpr unsigned kFlags = rapidjson::kParseFullPrecisionFlag;

Status parse_json(std::string_view text, rapidjson::Document& doc) {
  rapidjson::MemoryStream memory(text.data(), text.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> stream(memory);
  return parse_stream<kFlags>(stream, text.size(), doc);
}

Status parse_insitu(std::string_view text, std::string& scratch, rapidjson::Document& doc) {
  scratch.assign(text);
  rapidjson::InsituStringStream stream(scratch.data());
  return parse_stream<kFlags | rapidjson::kParseInsituFlag>(stream, text.size(), doc);
}

}  // namespace yurthub::hub
