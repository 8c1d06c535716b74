// ListFramer and WatchFramer: table-driven cases, real apiserver v1.26 captures split at every
// byte and in random pieces (compared with offsets found by RapidJSON's SAX reader, so the raw
// text must be verbatim), malformed input, the size bound and a 20 MB list. Every emitted value is
// also checked to be a view into the fed bytes unless it began in an earlier feed() call.
#include "base/json_frames.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace yurthub::base {
namespace {

const std::string kFixtures = YURTHUB_TESTDATA_DIR "/fixtures/apiserver-v1.26/";

std::string read_fixture(const std::string& name) {
  std::ifstream f(kFixtures + name, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_TRUE(f.good() || f.eof()) << name;
  return ss.str();
}

// ---- reference splits from RapidJSON ----

// kind: 'm' member, '[' items_begin, 'i' item, ']' items_end, 'e' end, 'w' watch event.
struct RefEvent {
  char kind;
  std::string key = {};
  std::size_t start = 0, end = 0;
};

// A stream RapidJSON reads in place (no StreamTraits copy), so Tell() is current in callbacks.
struct TellStream {
  using Ch = char;
  const char* head;
  const char* src;
  Ch Peek() const { return *src; }
  Ch Take() { return *src++; }
  std::size_t Tell() const { return static_cast<std::size_t>(src - head); }
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  std::size_t PutEnd(Ch*) { return 0; }
};

class RefHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, RefHandler> {
 public:
  RefHandler(const std::string& text, const TellStream& s, std::vector<RefEvent>* out)
      : text_(text), s_(s), out_(out) {}
  bool Default() { return value_end(); }
  bool Key(const char* str, rapidjson::SizeType len, bool) {
    if (depth_ == 1) {
      key_.assign(str, len);
      after_ = s_.Tell();
    }
    return true;
  }
  bool StartObject() {
    ++depth_;
    return true;
  }
  bool StartArray() {
    if (depth_++ == 1 && key_ == "items") {
      out_->push_back({'['});
      in_items_ = true;
      after_ = s_.Tell();
    }
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    if (--depth_ > 0) return value_end();
    out_->push_back({'e'});
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    if (--depth_ != 1 || !in_items_) return value_end();
    out_->push_back({']'});
    in_items_ = false;
    return true;
  }

 private:
  // The value that just ended runs from the first byte after `after_` that is not a separator.
  bool value_end() {
    const std::size_t end = s_.Tell();
    if (depth_ == 1 && key_ == "items") {  // "items":null
      out_->push_back({'['});
      out_->push_back({']'});
    } else if (depth_ == 1) {
      out_->push_back({'m', key_, text_.find_first_not_of(" \t\r\n:", after_), end});
    } else if (depth_ == 2 && in_items_) {
      out_->push_back({'i', "", text_.find_first_not_of(" \t\r\n,", after_), end});
      after_ = end;
    }
    return true;
  }
  const std::string& text_;
  const TellStream& s_;
  std::vector<RefEvent>* out_;
  std::string key_;
  std::size_t after_ = 0;
  int depth_ = 0;
  bool in_items_ = false;
};

std::vector<RefEvent> reference_list(const std::string& text) {
  std::vector<RefEvent> out;
  TellStream s{text.c_str(), text.c_str()};
  RefHandler h(text, s, &out);
  rapidjson::Reader reader;
  EXPECT_FALSE(reader.Parse(s, h).IsError()) << text.substr(0, 80);
  return out;
}

std::vector<RefEvent> reference_watch(const std::string& text) {
  std::vector<RefEvent> out;
  std::size_t pos = text.find_first_not_of(" \t\r\n");
  while (pos != std::string::npos) {
    TellStream s{text.c_str() + pos, text.c_str() + pos};
    rapidjson::BaseReaderHandler<> h;
    rapidjson::Reader reader;
    EXPECT_FALSE(reader.Parse<rapidjson::kParseStopWhenDoneFlag>(s, h).IsError());
    out.push_back({'w', "", pos, pos + s.Tell()});
    pos = text.find_first_not_of(" \t\r\n", pos + s.Tell());
  }
  return out;
}

// ---- checking what the framers emit against a reference ----

class Checker {
 public:
  Checker(std::string_view text, const std::vector<RefEvent>& ref) : text_(text), ref_(ref) {}
  void set_piece_begin(std::size_t b) { piece_begin_ = b; }
  void check(char kind, std::string_view key = {}, std::string_view raw = {}) {
    if (!mismatch_.empty()) return;
    const std::string at = "event " + std::to_string(next_) + ": ";
    if (next_ >= ref_.size()) return void(mismatch_ = at + "more events than expected");
    const RefEvent& e = ref_[next_++];
    if (e.kind != kind || e.key != key) return void(mismatch_ = at + "kind/key " + kind);
    if (kind != 'm' && kind != 'i' && kind != 'w') return;
    if (raw != text_.substr(e.start, e.end - e.start)) {
      return void(mismatch_ = at + "raw text " + std::string(raw.substr(0, 60)));
    }
    // A value begun in this feed() call must be a view into the caller's bytes, else a copy.
    const bool view = raw.data() >= text_.data() && raw.data() < text_.data() + text_.size();
    if (e.start >= piece_begin_ ? raw.data() != text_.data() + e.start : view) {
      mismatch_ = at + "copied when it need not be, or viewed when it cannot be";
    }
  }
  std::string result() const {
    if (!mismatch_.empty()) return mismatch_;
    return next_ == ref_.size() ? "" : "only " + std::to_string(next_) + " events";
  }

 private:
  std::string_view text_;
  const std::vector<RefEvent>& ref_;
  std::size_t next_ = 0, piece_begin_ = 0;
  std::string mismatch_;
};

class CheckingSink : public ListSink {
 public:
  explicit CheckingSink(Checker& c) : c_(c) {}
  void member(std::string_view key, std::string_view raw) override { c_.check('m', key, raw); }
  void items_begin() override { c_.check('['); }
  void item(std::string_view raw) override { c_.check('i', "", raw); }
  void items_end() override { c_.check(']'); }
  void end() override { c_.check('e'); }

 private:
  Checker& c_;
};

// Feeds `text` in pieces of the sizes `next_size()` returns; "" when the events match `ref`.
template <class NextSize>
std::string frame_checked(const std::string& text, const std::vector<RefEvent>& ref, bool watch,
                          NextSize next_size) {
  Checker checker(text, ref);
  CheckingSink sink(checker);
  ListFramer list(sink);
  WatchFramer events;
  const auto on_event = [&](std::string_view raw) { checker.check('w', "", raw); };
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t n = std::min(next_size(), text.size() - pos);
    checker.set_piece_begin(pos);
    const std::string_view piece(text.data() + pos, n);
    const Status s = watch ? events.feed(piece, on_event) : list.feed(piece);
    if (!s.ok()) return s.error().message;
    pos += n;
  }
  if (!watch && !list.done()) return "not done";
  return checker.result();
}

// Whole, one byte at a time, every split in two, and random pieces.
void check_every_split(const std::string& name, const std::string& text, bool watch) {
  const std::vector<RefEvent> ref = watch ? reference_watch(text) : reference_list(text);
  ASSERT_GT(ref.size(), 1u) << name;
  EXPECT_EQ(frame_checked(text, ref, watch, [] { return std::size_t{1} << 40; }), "") << name;
  EXPECT_EQ(frame_checked(text, ref, watch, [] { return std::size_t{1}; }), "") << name;
  for (std::size_t split = 1; split < text.size(); ++split) {
    bool first = true;
    const auto sizes = [&] { return std::exchange(first, false) ? split : text.size(); };
    const std::string r = frame_checked(text, ref, watch, sizes);
    if (!r.empty()) FAIL() << name << " split at " << split << ": " << r;
  }
  std::mt19937 rng(42);
  for (std::size_t max : {2, 7, 64, 1000}) {
    for (int round = 0; round < 20; ++round) {
      std::uniform_int_distribution<std::size_t> size(1, max);
      EXPECT_EQ(frame_checked(text, ref, watch, [&] { return size(rng); }), "") << name << max;
    }
  }
}

TEST(ListFramer, FixturesAtEverySplit) {
  for (const char* name :
       {"pods-list-node.body", "pods-list-page1.body", "pods-list-page2.body",
        "endpoints-list.body", "services-list.body", "nodepools-list.body",
        "endpointslices-list.json", "endpointslices-table.json", "api-v1.body", "node-get.body"}) {
    const std::string text = read_fixture(name);
    check_every_split(name, text, false);
    rapidjson::Document doc;
    doc.Parse(text.c_str());
    if (doc.HasMember("items")) {  // the reference itself saw every item
      const auto ref = reference_list(text);
      EXPECT_EQ(std::count_if(ref.begin(), ref.end(), [](auto& e) { return e.kind == 'i'; }),
                doc["items"].Size())
          << name;
    }
  }
}

TEST(WatchFramer, FixturesAtEverySplit) {
  for (const char* name : {"pods-watch.stream", "watch-json.stream", "watch-expired.stream"}) {
    const std::string text = read_fixture(name);
    EXPECT_EQ(reference_watch(text).size(), 5u) << name;  // one event per line
    check_every_split(name, text, true);
  }
}

// ---- table-driven cases ----

class RecordingSink : public ListSink {
 public:
  void member(std::string_view k, std::string_view raw) override {
    events.push_back("m:" + std::string(k) + "=" + std::string(raw));
  }
  void items_begin() override { events.push_back("["); }
  void item(std::string_view raw) override { events.push_back("i:" + std::string(raw)); }
  void items_end() override { events.push_back("]"); }
  void end() override { events.push_back("end"); }
  std::vector<std::string> events;
};

struct Framed {
  std::vector<std::string> events;
  std::string error;
  bool done = false;
};

// Feeds `text` in pieces of `piece` bytes (the last may be shorter).
Framed frame_list(std::string_view text, std::size_t piece,
                  std::size_t max = kMaxFramedValueBytes) {
  RecordingSink sink;
  ListFramer framer(sink, max);
  Framed f;
  for (std::size_t pos = 0; pos < text.size() && f.error.empty(); pos += piece) {
    const Status s = framer.feed(text.substr(pos, piece));
    if (!s.ok()) f.error = s.error().message;
  }
  f.events = sink.events;
  f.done = framer.done();
  return f;
}

Framed frame_watch(std::string_view text, std::size_t piece,
                   std::size_t max = kMaxFramedValueBytes) {
  WatchFramer framer(max);
  Framed f;
  for (std::size_t pos = 0; pos < text.size() && f.error.empty(); pos += piece) {
    const Status s = framer.feed(text.substr(pos, piece),
                                 [&](std::string_view raw) { f.events.emplace_back(raw); });
    if (!s.ok()) f.error = s.error().message;
  }
  return f;
}

using Events = std::vector<std::string>;

TEST(ListFramer, Cases) {
  const struct {
    std::string text;
    Events events;
  } cases[] = {
      {R"({"kind":"PodList","items":[]})", {R"(m:kind="PodList")", "[", "]", "end"}},
      {R"({"kind":"PodList","items":null})", {R"(m:kind="PodList")", "[", "]", "end"}},
      {R"({})", {"end"}},
      {R"({"a":1})", {"m:a=1", "end"}},
      {R"({"a":-1.5e+3 , "b":true,"c":null,"d":[]})",
       {"m:a=-1.5e+3", "m:b=true", "m:c=null", "m:d=[]", "end"}},
      {R"({"items":[{"a":"}]{[\""},{"b":"\\"},"\\\"]"]})",
       {"[", R"(i:{"a":"}]{[\""})", R"(i:{"b":"\\"})", R"(i:"\\\"]")", "]", "end"}},
      {R"({"items":[[1,[2]],{"x":[[]]},3,"s",true,null,-0.5,{}]})",
       {"[", "i:[1,[2]]", R"(i:{"x":[[]]})", "i:3", R"(i:"s")", "i:true", "i:null", "i:-0.5",
        "i:{}", "]", "end"}},
      {R"({"items":[1],"metadata":{"continue":"abc","remainingItemCount":2}})",
       {"[", "i:1", "]", R"(m:metadata={"continue":"abc","remainingItemCount":2})", "end"}},
      {"\r\n {\n \"kind\" : \"X\" ,\n \"items\" : [ {\"a\" : [ 1 ,2 ] } ,\t2 ] \n}\n  ",
       {R"(m:kind="X")", "[", R"(i:{"a" : [ 1 ,2 ] })", "i:2", "]", "end"}},
      {R"({"k\u00e9y\n":"\u263a ☺ \ud83d\ude00","items":["é"]})",
       {"m:k\xc3\xa9y\n=\"\\u263a ☺ \\ud83d\\ude00\"", "[", "i:\"é\"", "]", "end"}},
      {R"({"\u0069tems":[1]})", {"[", "i:1", "]", "end"}},
      {R"({"\ud83d\ude00":1,"\ud800":2})", {"m:\xf0\x9f\x98\x80=1", "m:\xef\xbf\xbd=2", "end"}},
      {R"({"a":"x\\\\","b":"\/\b\f\n\r\t"})", {R"(m:a="x\\\\")", R"(m:b="\/\b\f\n\r\t")", "end"}},
  };
  for (const auto& c : cases) {
    for (std::size_t piece : {c.text.size(), std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
      const Framed f = frame_list(c.text, piece);
      EXPECT_EQ(f.error, "") << c.text << " piece " << piece;
      EXPECT_EQ(f.events, c.events) << c.text << " piece " << piece;
      EXPECT_TRUE(f.done) << c.text;
    }
  }
}

TEST(ListFramer, MalformedInput) {
  const struct {
    std::string text;
    std::string reason;
    std::size_t offset;
  } cases[] = {
      {"[1,2]", "not a JSON object", 0},
      {"  \"x\"", "not a JSON object", 2},
      {R"({"items":[1,]})", "expected a value", 12},
      {R"({"items":[1})", "expected ',' or ']'", 11},
      {R"({"a":{"b":[}})", "expected a value", 11},
      {R"({"a":{"b":1]})", "mismatched closing bracket", 11},
      {R"({"items":{}})", "neither an array nor null", 9},
      {R"({"items":"x"})", "neither an array nor null", 9},
      {R"({"items":nul})", "neither an array nor null", 12},
      {R"({"a":1}x)", "data after the end of the list", 7},
      {R"({"a":1} })", "data after the end of the list", 8},
      {R"({"a" 1})", "expected ':'", 5},
      {R"({"a":1,})", "expected a member name", 7},
      {R"({a:1})", "expected a member name", 1},
      {R"({"a":{"b" 1}})", "expected ':'", 10},
      {R"({"a":{"b":1 "c":2}})", "expected ',' or a closing bracket", 12},
      {R"({"a":{,}})", "expected a member name", 6},
      {R"({"a":"\x"})", "bad escape", 7},
      {R"({"a":"\u12g4"})", "bad \\u escape", 10},
      {"{\"a\":\"tab\there\"}", "control character", 9},
      {R"({"items":[],"items":[]})", "a second \"items\"", 20},
      {R"({"a":])", "expected a value", 5},
      {R"({"a":*})", "expected a value", 5},
      {"{\"a\":" + std::string(10001, '['), "nested too deeply", 10005},
  };
  for (const auto& c : cases) {
    for (std::size_t piece : {c.text.size(), std::size_t{1}}) {
      const Framed f = frame_list(c.text, piece);
      EXPECT_NE(f.error.find(c.reason), std::string::npos) << c.text << ": " << f.error;
      EXPECT_NE(f.error.find("at byte " + std::to_string(c.offset)), std::string::npos)
          << c.text << ": " << f.error;
      EXPECT_FALSE(f.done);
    }
  }
}

// Strings long enough for the framer's sixteen-byte scan, with what ends a run (a quote, an
// escape, a control character) at every offset of the block and past it, and bytes above 0x7f
// (UTF-8), which never end one.
TEST(ListFramer, LongStringsStopWhereTheyShould) {
  for (std::size_t k = 0; k < 40; ++k) {
    const std::string run(k, 'x');
    const std::string escaped = run + R"(\"\\\/\n)" + std::string(20, 'y') + R"(\u00e9)";
    const std::string utf8 = run + "\xc3\xa9\xe2\x98\xba" + std::string(17, '\xff');
    for (std::size_t piece : {std::size_t{1000}, std::size_t{1}, std::size_t{7}, std::size_t{16}}) {
      const Framed f =
          frame_list(R"({"a":")" + escaped + R"(","b":")" + utf8 + R"(","items":[]})", piece);
      EXPECT_EQ(f.error, "") << k << " piece " << piece;
      EXPECT_EQ(f.events,
                (Events{"m:a=\"" + escaped + "\"", "m:b=\"" + utf8 + "\"", "[", "]", "end"}))
          << k << " piece " << piece;
      const Framed control = frame_list(R"({"a":")" + run + "\x01" + run + R"("})", piece);
      EXPECT_NE(
          control.error.find("control character in a string at byte " + std::to_string(6 + k)),
          std::string::npos)
          << control.error;
      const Framed bad = frame_list(R"({"a":")" + run + R"(\x")" + run + R"("})", piece);
      EXPECT_NE(bad.error.find("bad escape in a string at byte " + std::to_string(7 + k)),
                std::string::npos)
          << bad.error;
    }
  }
}

TEST(ListFramer, StaysFailedAndIncompleteIsNotDone) {
  RecordingSink sink;
  ListFramer framer(sink);
  EXPECT_TRUE(framer.feed(R"({"items":[{"a":1},)").ok());
  EXPECT_FALSE(framer.done());
  const Status bad = framer.feed("]");
  ASSERT_FALSE(bad.ok());
  const Status later = framer.feed("]}");
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.error().message, bad.error().message);
  EXPECT_EQ(sink.events, (Events{"[", R"(i:{"a":1})"}));
  EXPECT_FALSE(framer.done());
}

TEST(ListFramer, SizeBound) {
  // 10 bytes is the bound: a 10-byte item passes, an 11-byte one fails, split or not.
  for (std::size_t piece : {std::size_t{100}, std::size_t{1}, std::size_t{4}}) {
    Framed ok = frame_list(R"({"items":["01234567",1]})", piece, 10);
    EXPECT_EQ(ok.error, "");
    EXPECT_EQ(ok.events, (Events{"[", R"(i:"01234567")", "i:1", "]", "end"}));
    for (const char* text : {R"({"items":["012345678"]})", R"({"metadata":{"a":"1234"}})",
                             R"({"a-very-long-key":1})"}) {
      const Framed f = frame_list(text, piece, 10);
      EXPECT_NE(f.error.find("larger than the size bound"), std::string::npos) << text << piece;
    }
  }
}

TEST(WatchFramer, Cases) {
  const struct {
    std::string text;
    Events events;
    std::string error;
  } cases[] = {
      {"{\"type\":\"ADDED\",\"object\":{}}\n{\"type\":\"DELETED\"}\n",
       {R"({"type":"ADDED","object":{}})", R"({"type":"DELETED"})"},
       ""},
      {R"({}{"a":"}\"{"} [1])", {"{}", R"({"a":"}\"{"})", "[1]"}, ""},
      {"1 2 \"s\" nul", {"1", "2", R"("s")"}, ""},  // the last value is not known to be complete
      {"{\"type\":\"ADDED\",\"object\":{\"a\":", {}, ""},
      {"{\"a\":1}}", {R"({"a":1})"}, "expected a value at byte 7"},
      {"{\"a\":1},{\"b\":2}", {R"({"a":1})"}, "expected a value at byte 7"},
      {"{\"a\":[1}", {}, "mismatched closing bracket at byte 7"},
      {"\n\n  ]", {}, "expected a value at byte 4"},
  };
  for (const auto& c : cases) {
    for (std::size_t piece : {c.text.size(), std::size_t{1}, std::size_t{3}}) {
      const Framed f = frame_watch(c.text, piece);
      EXPECT_EQ(f.events, c.events) << c.text << " piece " << piece;
      if (c.error.empty()) {
        EXPECT_EQ(f.error, "") << c.text;
      } else {
        EXPECT_NE(f.error.find(c.error), std::string::npos) << c.text << ": " << f.error;
      }
    }
  }
}

TEST(WatchFramer, SizeBoundAndStaysFailed) {
  WatchFramer framer(16);
  std::vector<std::string> got;
  const auto on = [&](std::string_view raw) { got.emplace_back(raw); };
  EXPECT_TRUE(framer.feed(R"({"type":"ADDED"})", on).ok());  // exactly 16 bytes
  EXPECT_TRUE(framer.feed(R"({"type":"DELE)", on).ok());
  const Status s = framer.feed(R"(TED"})", on);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("larger than the size bound"), std::string::npos);
  EXPECT_FALSE(framer.feed("{}", on).ok());
  EXPECT_EQ(got, (std::vector<std::string>{R"({"type":"ADDED"})"}));
}

// ---- a 20 MB list ----

// Pod-like items with escapes and brackets inside strings; offsets recorded for the reference.
std::string big_list(std::size_t bytes, std::vector<RefEvent>* ref) {
  std::string text = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},)";
  for (const char* key : {"kind", "apiVersion", "metadata"}) {
    const std::size_t start = text.find(':', text.find(std::string("\"") + key + "\"")) + 1;
    const bool object = key[0] == 'm';
    ref->push_back({'m', key, start, text.find(object ? "}," : ",", start) + (object ? 1 : 0)});
  }
  text += R"("items":[)";
  ref->push_back({'['});
  for (int i = 0; text.size() < bytes; ++i) {
    if (i > 0) text += ",";
    const std::size_t start = text.size();
    text += R"({"metadata":{"name":"pod-)" + std::to_string(i) +
            R"(","labels":{"app":"web","note":"a \"quoted\" {brace} [and] \\ back\u00e9"}},)"
            R"("spec":{"containers":[{"name":"c","image":"nginx:1.25","args":["--x=1","--y"],)"
            R"("ports":[{"containerPort":80,"protocol":"TCP"}]}],"nodeName":"edge-1"},)"
            R"("status":{"phase":"Running","podIP":"10.0.0.)" +
            std::to_string(i % 250) +
            R"(","conditions":[{"type":"Ready","status":"True"}],"restartCount":)" +
            std::to_string(i % 7) + R"(,"ratio":-1.25e-3,"ok":true,"gone":null}})";
    ref->push_back({'i', "", start, text.size()});
  }
  text += "]}\n";
  ref->push_back({']'});
  ref->push_back({'e'});
  return text;
}

TEST(ListFramer, TwentyMegabyteListIn16KiBPieces) {
  std::vector<RefEvent> ref;
  const std::string text = big_list(20u << 20, &ref);
  const std::vector<RefEvent> parsed = reference_list(text);  // the generator's offsets are right
  ASSERT_EQ(parsed.size(), ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ASSERT_EQ(parsed[i].kind, ref[i].kind) << i;
    ASSERT_EQ(parsed[i].key, ref[i].key) << i;
    ASSERT_EQ(parsed[i].start, ref[i].start) << i;
    ASSERT_EQ(parsed[i].end, ref[i].end) << i;
  }
  EXPECT_GT(ref.size(), 30000u);
  // The checker also requires every item inside one piece to be a view, not a copy.
  EXPECT_EQ(frame_checked(text, ref, false, [] { return std::size_t{16384}; }), "");
}

// Not a test: prints framing throughput. Run with --gtest_also_run_disabled_tests.
TEST(ListFramer, DISABLED_Throughput) {
  std::vector<RefEvent> ref;
  const std::string text = big_list(20u << 20, &ref);
  struct CountingSink : ListSink {
    void member(std::string_view, std::string_view) override {}
    void items_begin() override {}
    void item(std::string_view raw) override { bytes += raw.size(); }
    void items_end() override {}
    void end() override {}
    std::size_t bytes = 0;
  } sink;
  constexpr int kRounds = 20;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < kRounds; ++r) {
    ListFramer framer(sink);
    for (std::size_t pos = 0; pos < text.size(); pos += 16384) {
      ASSERT_TRUE(framer.feed(std::string_view(text).substr(pos, 16384)).ok());
    }
    ASSERT_TRUE(framer.done());
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("list framing: %.0f MB/s (%zu bytes x %d in %.3f s)\n",
              text.size() * kRounds / s / 1e6, text.size(), kRounds, s);
}

}  // namespace
}  // namespace yurthub::base
