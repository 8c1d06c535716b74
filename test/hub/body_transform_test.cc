// Where a relayed body goes besides the client (hub/body_transform.h): decoded for the readers,
// the filter's output replacing the piece, the tap getting what the client gets, and a body that
// cannot be read ending the filtered response but not an unfiltered one.
#include "hub/body_transform.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <vector>

#include "test/hub/recording_tap.h"

namespace yurthub::hub {
namespace {

using test_support::RecordingTap;

// Upper-cases what it is fed, holding back the last byte of each piece until the next (a filter
// that keeps an incomplete object), and refuses a '!' as malformed input.
class UpperFilter : public ResponseFilter {
 public:
  FilterStatus feed(std::string_view bytes, std::string* out) override {
    for (char c : bytes) {
      if (c == '!') return FilterStatus::Cut;
      held_ += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    if (held_.size() < 2) return FilterStatus::Hold;
    out->append(held_, 0, held_.size() - 1);
    if (echo_) echo_->item(std::string_view(held_).substr(0, held_.size() - 1));
    held_ = held_.substr(held_.size() - 1);
    return FilterStatus::Send;
  }
  FilterStatus finish(std::string* out) override {
    *out += held_;
    if (echo_ && !held_.empty()) echo_->item(held_);
    held_.clear();
    return FilterStatus::Send;
  }
  // With frames_lists, each piece it sends is echoed as one list item.
  bool echo_list(base::ListSink* sink) override {
    if (frames_lists) echo_ = sink;
    return frames_lists;
  }
  std::string_view cut_reason() const override { return "malformed"; }
  // A watch event: upper-cased on a line of its own; one whose object is "drop" is left out.
  FilterStatus event(std::string_view raw, std::string* out) override {
    if (raw.find("\"drop\"") != std::string_view::npos) return FilterStatus::Hold;
    for (char c : raw)
      out->push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    out->push_back('\n');
    return FilterStatus::Send;
  }
  void unframeable(std::string_view why) override { unframed = why; }
  bool reactive() const override { return false; }
  FilterStatus correct(std::string* out) override {
    if (cannot_correct) return FilterStatus::Relist;
    *out += corrections;
    return corrections.empty() ? FilterStatus::Hold : FilterStatus::Send;
  }
  std::string unframed;
  std::string corrections;      // what correct() appends
  bool cannot_correct = false;  // correct() says the client must re-list
  bool frames_lists = false;    // echo_list() takes a sink

 private:
  std::string held_;
  base::ListSink* echo_ = nullptr;
};

// The items a list's tap is told, as the filter framed them.
class ItemLog final : public base::ListSink {
 public:
  void member(std::string_view, std::string_view) override {}
  void items_begin() override {}
  void item(std::string_view raw) override { items.emplace_back(raw); }
  void items_end() override {}
  void end() override {}
  std::vector<std::string> items;
};

// Keeps the whole body until finish(), as a get's filter keeps its object; says it cannot correct.
class WholeObjectFilter : public ResponseFilter {
 public:
  FilterStatus feed(std::string_view bytes, std::string*) override {
    object_ += bytes;
    return FilterStatus::Hold;
  }
  FilterStatus finish(std::string* out) override {
    *out += object_;
    return FilterStatus::Send;
  }
  std::string_view cut_reason() const override { return ""; }
  FilterStatus event(std::string_view, std::string*) override { return FilterStatus::Hold; }
  void unframeable(std::string_view) override {}
  bool reactive() const override { return true; }
  FilterStatus correct(std::string*) override { return FilterStatus::Relist; }

 private:
  std::string object_;
};

std::string gzip(std::string_view data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(BodyTransformTest, WithNoReaderNothingIsTouched) {
  BodyTransform feed(nullptr, nullptr, true);
  EXPECT_EQ(feed.feed("not even gzip"), FilterStatus::Send);
  EXPECT_TRUE(feed.out().empty());
  EXPECT_EQ(feed.finish(), FilterStatus::Send);
  EXPECT_FALSE(feed.failed());
}

TEST(BodyTransformTest, TheTapGetsTheDecodedBodyWhileTheClientGetsItAsSent) {
  RecordingTap tap;
  BodyTransform feed(&tap, nullptr, true);
  const std::string body = R"({"kind":"Pod","metadata":{"name":"web-0"}})";
  const std::string gz = gzip(body);
  // In two pieces, split inside the gzip stream.
  EXPECT_EQ(feed.feed(std::string_view(gz).substr(0, gz.size() / 2)), FilterStatus::Send);
  EXPECT_TRUE(feed.out().empty());  // the client's piece is the relayed one, not out()
  EXPECT_EQ(feed.feed(std::string_view(gz).substr(gz.size() / 2)), FilterStatus::Send);
  EXPECT_EQ(feed.finish(), FilterStatus::Send);
  feed.end(true);
  EXPECT_EQ(tap.got, body);
  EXPECT_TRUE(tap.ended);
  EXPECT_TRUE(tap.complete);
}

TEST(BodyTransformTest, TheFilteredOutputIsWhatTheClientAndTheTapGet) {
  RecordingTap tap;
  UpperFilter filter;
  BodyTransform feed(&tap, &filter, false);
  std::string client;
  ASSERT_EQ(feed.feed("abc"), FilterStatus::Send);
  client += feed.out();
  ASSERT_EQ(feed.feed("def"), FilterStatus::Send);
  client += feed.out();
  feed.out().clear();
  ASSERT_EQ(feed.finish(), FilterStatus::Send);
  client += feed.out();
  EXPECT_EQ(client, "ABCDEF");
  EXPECT_EQ(tap.got, client);
}

TEST(BodyTransformTest, AListTheFilterFramesReachesTheTapFramedNotAsBytes) {
  ItemLog items;
  RecordingTap tap;
  tap.sink = &items;
  UpperFilter filter;
  filter.frames_lists = true;
  BodyTransform feed(&tap, &filter, false);
  std::string client;
  for (std::string_view piece : {"abc", "def"}) {
    ASSERT_EQ(feed.feed(piece), FilterStatus::Send);
    client += feed.out();
  }
  feed.out().clear();
  ASSERT_EQ(feed.finish(), FilterStatus::Send);
  client += feed.out();
  feed.end(true);
  EXPECT_EQ(client, "ABCDEF");
  EXPECT_EQ(items.items, (std::vector<std::string>{"AB", "CDE", "F"}));
  EXPECT_TRUE(tap.got.empty());  // not the bytes a second time
  EXPECT_TRUE(tap.complete);
}

TEST(BodyTransformTest, ATapThatCanTakeAFramedListGetsBytesWhenTheFilterDoesNotFrameIt) {
  ItemLog items;
  RecordingTap tap;
  tap.sink = &items;
  UpperFilter filter;  // frames no list
  BodyTransform feed(&tap, &filter, false);
  ASSERT_EQ(feed.feed("abc"), FilterStatus::Send);
  ASSERT_EQ(feed.finish(), FilterStatus::Send);
  feed.end(true);
  EXPECT_EQ(tap.got, "ABC");
  EXPECT_TRUE(items.items.empty());
}

TEST(BodyTransformTest, AGzippedFilteredBodyIsDecodedBeforeTheFilter) {
  UpperFilter filter;
  BodyTransform feed(nullptr, &filter, true);
  ASSERT_EQ(feed.feed(gzip("watch events")), FilterStatus::Send);
  std::string client = feed.out();
  feed.out().clear();
  ASSERT_EQ(feed.finish(), FilterStatus::Send);
  client += feed.out();
  EXPECT_EQ(client, "WATCH EVENTS");
}

TEST(BodyTransformTest, BadInputCutsAFilteredResponseAndMarksTheTapIncomplete) {
  RecordingTap tap;
  UpperFilter filter;
  BodyTransform feed(&tap, &filter, false);
  ASSERT_EQ(feed.feed("ok"), FilterStatus::Send);
  EXPECT_EQ(feed.feed("bad!"), FilterStatus::Cut);
  EXPECT_EQ(feed.error(), "malformed");
  EXPECT_EQ(feed.feed("more"), FilterStatus::Cut);  // stays cut
  EXPECT_EQ(feed.finish(), FilterStatus::Cut);
  feed.end(true);
  EXPECT_FALSE(tap.complete);
}

TEST(BodyTransformTest, BadGzipEndsOnlyTheTapOfAnUnfilteredResponse) {
  RecordingTap tap;
  BodyTransform feed(&tap, nullptr, true);
  EXPECT_EQ(feed.feed("this is not gzip"), FilterStatus::Send);  // the client still gets it
  EXPECT_FALSE(feed.error().empty());
  EXPECT_EQ(feed.feed("more"), FilterStatus::Send);
  EXPECT_EQ(feed.finish(), FilterStatus::Send);
  feed.end(true);
  EXPECT_TRUE(tap.ended);
  EXPECT_FALSE(tap.complete);
}

TEST(BodyTransformTest, AGzipStreamThatEndsEarlyIsNotComplete) {
  UpperFilter filter;
  RecordingTap tap;
  BodyTransform feed(&tap, &filter, true);
  const std::string gz = gzip("a body cut short");
  ASSERT_EQ(feed.feed(std::string_view(gz).substr(0, gz.size() - 4)),  // no trailer
            FilterStatus::Send);
  EXPECT_EQ(feed.finish(), FilterStatus::Cut);
  EXPECT_EQ(feed.error(), "the gzip stream ended early");
  feed.end(true);
  EXPECT_FALSE(tap.complete);
}

TEST(BodyTransformTest, AWatchIsFramedOnceAndTheTapGetsEachEventTheClientGets) {
  RecordingTap tap;
  UpperFilter filter;
  BodyTransform feed(&tap, &filter, false, true);
  // Three events, split inside the second; the third is dropped by the filter.
  const std::string stream = "{\"a\":1}\n{\"b\":\n [2]}\n{\"c\":\"drop\"}\n";
  std::string client;
  ASSERT_EQ(feed.feed(std::string_view(stream).substr(0, 12)), FilterStatus::Send);
  client += feed.out();
  ASSERT_EQ(feed.feed(std::string_view(stream).substr(12)), FilterStatus::Send);
  client += feed.out();
  EXPECT_EQ(client, "{\"A\":1}\n{\"B\":\n [2]}\n");  // an event's own newlines stay in it
  EXPECT_EQ(tap.events, (std::vector<std::string>{"{\"A\":1}", "{\"B\":\n [2]}"}));
  EXPECT_EQ(tap.batches, 2);  // a batch per relayed piece
  EXPECT_TRUE(tap.got.empty());
  // Corrections reach the tap as events too.
  filter.corrections = "{\"x\":1}\n{\"y\":2}\n";
  std::string corrections = "earlier\n";  // appended to, not replaced
  ASSERT_EQ(feed.correct(&corrections), FilterStatus::Send);
  EXPECT_EQ(corrections, "earlier\n{\"x\":1}\n{\"y\":2}\n");
  EXPECT_EQ(tap.events.size(), 4u);
  EXPECT_EQ(tap.events.back(), "{\"y\":2}");
}

TEST(BodyTransformTest, AnUnfilteredWatchGoesToTheTapAsReceivedEventByEvent) {
  RecordingTap tap;
  BodyTransform feed(&tap, nullptr, false, true);
  ASSERT_EQ(feed.feed("{\"type\":\"ADDED\"}\n{\"type\""), FilterStatus::Send);
  EXPECT_TRUE(feed.out().empty());  // the client gets the relayed piece itself
  ASSERT_EQ(feed.feed(":\"DELETED\"}\n"), FilterStatus::Send);
  EXPECT_EQ(tap.events,
            (std::vector<std::string>{"{\"type\":\"ADDED\"}", "{\"type\":\"DELETED\"}"}));
}

TEST(BodyTransformTest, AWatchThatCannotBeFramedCutsAFilteredStreamAndTellsBoth) {
  RecordingTap tap;
  UpperFilter filter;
  BodyTransform feed(&tap, &filter, false, true);
  EXPECT_EQ(feed.feed("{\"a\":1}\n{\"type\":\"ADDED\",]\n"), FilterStatus::Cut);
  EXPECT_EQ(feed.out(), "{\"A\":1}\n");  // the event before the break still goes out
  EXPECT_EQ(tap.events.size(), 1u);
  EXPECT_FALSE(filter.unframed.empty());
  EXPECT_FALSE(tap.unframed.empty());
  // Unfiltered, the client keeps its stream and only the tap is told.
  RecordingTap alone;
  BodyTransform unfiltered(&alone, nullptr, false, true);
  EXPECT_EQ(unfiltered.feed("][\n"), FilterStatus::Send);
  EXPECT_FALSE(alone.unframed.empty());
}

// What the relay switches on (hub/hooks/filter_status.h), from each place it comes from.
TEST(BodyTransformTest, EachFilterStatusComesOutWhereTheRelayActsOnIt) {
  {  // A get's object is held until the body is complete, then sent whole.
    RecordingTap tap;
    WholeObjectFilter filter;
    BodyTransform feed(&tap, &filter, false);
    EXPECT_EQ(feed.feed(R"({"kind":"Pod",)"), FilterStatus::Hold);
    EXPECT_EQ(feed.feed(R"("metadata":{}})"), FilterStatus::Hold);
    EXPECT_TRUE(feed.out().empty());
    EXPECT_TRUE(tap.got.empty());
    EXPECT_EQ(feed.finish(), FilterStatus::Send);
    EXPECT_EQ(feed.out(), R"({"kind":"Pod","metadata":{}})");
    EXPECT_EQ(tap.got, feed.out());
  }
  {  // Ordinary bytes go out; a piece the filter keeps is held; malformed input cuts.
    RecordingTap tap;
    UpperFilter filter;
    BodyTransform feed(&tap, &filter, false);
    EXPECT_EQ(feed.feed(R"([{"a":1},)"), FilterStatus::Send);
    EXPECT_EQ(feed.out(), R"([{"A":1})");
    EXPECT_EQ(feed.feed(""), FilterStatus::Hold);  // the held ',' stays held
    EXPECT_TRUE(feed.out().empty());
    EXPECT_EQ(feed.feed(R"({"b"!})"), FilterStatus::Cut);
    EXPECT_EQ(feed.error(), "malformed");
    feed.end(true);
    EXPECT_FALSE(tap.complete);
  }
  {  // Bad gzip cuts a filtered body, never an unfiltered one.
    UpperFilter filter;
    BodyTransform filtered(nullptr, &filter, true);
    EXPECT_EQ(filtered.feed("not gzip"), FilterStatus::Cut);
    EXPECT_NE(filtered.error().find("cannot decompress"), std::string::npos);
    RecordingTap tap;
    BodyTransform unfiltered(&tap, nullptr, true);
    EXPECT_EQ(unfiltered.feed("not gzip"), FilterStatus::Send);
    EXPECT_EQ(unfiltered.feed(""), FilterStatus::Hold);  // nothing arrived for the client
  }
  {  // A watch: a piece of only dropped events or half an event is held.
    UpperFilter filter;
    BodyTransform feed(nullptr, &filter, false, true);
    EXPECT_EQ(feed.feed("{\"c\":\"drop\"}\n{\"d\""), FilterStatus::Hold);
    EXPECT_EQ(feed.feed(":4}\n"), FilterStatus::Send);
    EXPECT_EQ(feed.out(), "{\"D\":4}\n");
  }
  {  // Corrections: none needed is Hold; one that cannot be made is Relist, and the tap gets
     // nothing of it.
    RecordingTap tap;
    UpperFilter filter;
    BodyTransform feed(&tap, &filter, false, true);
    std::string events;
    EXPECT_EQ(feed.correct(&events), FilterStatus::Hold);
    filter.cannot_correct = true;
    EXPECT_EQ(feed.correct(&events), FilterStatus::Relist);
    EXPECT_TRUE(events.empty());
    EXPECT_EQ(tap.batches, 1);  // only the empty correction's batch
    WholeObjectFilter other;
    BodyTransform get(nullptr, &other, false, true);
    EXPECT_EQ(get.correct(&events), FilterStatus::Relist);
  }
}

TEST(BodyTransformTest, TheCachesFailureIsReported) {
  RecordingTap tap;
  BodyTransform feed(&tap, nullptr, false);
  EXPECT_FALSE(feed.failed());
  tap.fail = true;
  EXPECT_TRUE(feed.failed());
}

}  // namespace
}  // namespace yurthub::hub
