// Where a relayed body goes besides the client (hub/body_transform.h): decoded for the readers,
// the filter's output replacing the piece, the tap getting what the client gets, and a body that
// cannot be read ending the filtered response but not an unfiltered one.
#include "hub/body_transform.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <vector>

namespace yurthub::hub {
namespace {

class RecordingTap : public ResponseTap {
 public:
  void body(std::string_view bytes) override { got += bytes; }
  void event(std::string_view raw) override { events.emplace_back(raw); }
  void events_done() override { ++batches; }
  void unframeable(std::string_view why) override { unframed = why; }
  std::vector<std::string> events;
  int batches = 0;
  std::string unframed;
  void end(bool c) override {
    ended = true;
    complete = c;
  }
  bool failed() const override { return fail; }
  std::string got;
  bool ended = false;
  bool complete = false;
  bool fail = false;
};

// Upper-cases what it is fed, holding back the last byte of each piece until the next (a filter
// that keeps an incomplete object), and refuses a '!' as malformed input.
class UpperFilter : public ResponseFilter {
 public:
  Status feed(std::string_view bytes, std::string* out) override {
    for (char c : bytes) {
      if (c == '!') return make_error("malformed");
      held_ += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    out->append(held_, 0, held_.empty() ? 0 : held_.size() - 1);
    held_ = held_.empty() ? "" : held_.substr(held_.size() - 1);
    return {};
  }
  Status finish(std::string* out) override {
    *out += held_;
    held_.clear();
    return {};
  }
  // A watch event: upper-cased on a line of its own; one whose object is "drop" is left out.
  void event(std::string_view raw, std::string* out) override {
    if (raw.find("\"drop\"") != std::string_view::npos) return;
    for (char c : raw)
      out->push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    out->push_back('\n');
  }
  void unframeable(std::string_view why) override { unframed = why; }
  bool reactive() const override { return false; }
  bool correct(std::string* out) override {
    *out += corrections;
    return true;
  }
  std::string unframed;
  std::string corrections;  // what correct() appends

 private:
  std::string held_;
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
  EXPECT_TRUE(feed.feed("not even gzip"));
  EXPECT_TRUE(feed.out().empty());
  EXPECT_TRUE(feed.finish());
  EXPECT_FALSE(feed.failed());
}

TEST(BodyTransformTest, TheTapGetsTheDecodedBodyWhileTheClientGetsItAsSent) {
  RecordingTap tap;
  BodyTransform feed(&tap, nullptr, true);
  const std::string body = R"({"kind":"Pod","metadata":{"name":"web-0"}})";
  const std::string gz = gzip(body);
  // In two pieces, split inside the gzip stream.
  EXPECT_TRUE(feed.feed(std::string_view(gz).substr(0, gz.size() / 2)));
  EXPECT_TRUE(feed.out().empty());  // the client's piece is the relayed one, not out()
  EXPECT_TRUE(feed.feed(std::string_view(gz).substr(gz.size() / 2)));
  EXPECT_TRUE(feed.finish());
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
  ASSERT_TRUE(feed.feed("abc"));
  client += feed.out();
  ASSERT_TRUE(feed.feed("def"));
  client += feed.out();
  feed.out().clear();
  ASSERT_TRUE(feed.finish());
  client += feed.out();
  EXPECT_EQ(client, "ABCDEF");
  EXPECT_EQ(tap.got, client);
}

TEST(BodyTransformTest, AGzippedFilteredBodyIsDecodedBeforeTheFilter) {
  UpperFilter filter;
  BodyTransform feed(nullptr, &filter, true);
  ASSERT_TRUE(feed.feed(gzip("watch events")));
  std::string client = feed.out();
  feed.out().clear();
  ASSERT_TRUE(feed.finish());
  client += feed.out();
  EXPECT_EQ(client, "WATCH EVENTS");
}

TEST(BodyTransformTest, BadInputCutsAFilteredResponseAndMarksTheTapIncomplete) {
  RecordingTap tap;
  UpperFilter filter;
  BodyTransform feed(&tap, &filter, false);
  ASSERT_TRUE(feed.feed("ok"));
  EXPECT_FALSE(feed.feed("bad!"));
  EXPECT_EQ(feed.error(), "malformed");
  EXPECT_FALSE(feed.feed("more"));  // stays failed
  feed.end(true);
  EXPECT_FALSE(tap.complete);
}

TEST(BodyTransformTest, BadGzipEndsOnlyTheTapOfAnUnfilteredResponse) {
  RecordingTap tap;
  BodyTransform feed(&tap, nullptr, true);
  EXPECT_TRUE(feed.feed("this is not gzip"));  // the client still gets its bytes
  EXPECT_FALSE(feed.error().empty());
  EXPECT_TRUE(feed.feed("more"));
  EXPECT_TRUE(feed.finish());
  feed.end(true);
  EXPECT_TRUE(tap.ended);
  EXPECT_FALSE(tap.complete);
}

TEST(BodyTransformTest, AGzipStreamThatEndsEarlyIsNotComplete) {
  UpperFilter filter;
  RecordingTap tap;
  BodyTransform feed(&tap, &filter, true);
  const std::string gz = gzip("a body cut short");
  ASSERT_TRUE(feed.feed(std::string_view(gz).substr(0, gz.size() - 4)));  // no trailer
  EXPECT_FALSE(feed.finish());
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
  ASSERT_TRUE(feed.feed(std::string_view(stream).substr(0, 12)));
  client += feed.out();
  ASSERT_TRUE(feed.feed(std::string_view(stream).substr(12)));
  client += feed.out();
  EXPECT_EQ(client, "{\"A\":1}\n{\"B\":\n [2]}\n");  // an event's own newlines stay in it
  EXPECT_EQ(tap.events, (std::vector<std::string>{"{\"A\":1}", "{\"B\":\n [2]}"}));
  EXPECT_EQ(tap.batches, 2);  // a batch per relayed piece
  EXPECT_TRUE(tap.got.empty());
  // Corrections reach the tap as events too.
  filter.corrections = "{\"x\":1}\n{\"y\":2}\n";
  std::string corrections = "earlier\n";  // appended to, not replaced
  ASSERT_TRUE(feed.correct(&corrections));
  EXPECT_EQ(corrections, "earlier\n{\"x\":1}\n{\"y\":2}\n");
  EXPECT_EQ(tap.events.size(), 4u);
  EXPECT_EQ(tap.events.back(), "{\"y\":2}");
}

TEST(BodyTransformTest, AnUnfilteredWatchGoesToTheTapAsReceivedEventByEvent) {
  RecordingTap tap;
  BodyTransform feed(&tap, nullptr, false, true);
  ASSERT_TRUE(feed.feed("{\"type\":\"ADDED\"}\n{\"type\""));
  EXPECT_TRUE(feed.out().empty());  // the client gets the relayed piece itself
  ASSERT_TRUE(feed.feed(":\"DELETED\"}\n"));
  EXPECT_EQ(tap.events,
            (std::vector<std::string>{"{\"type\":\"ADDED\"}", "{\"type\":\"DELETED\"}"}));
}

TEST(BodyTransformTest, AWatchThatCannotBeFramedCutsAFilteredStreamAndTellsBoth) {
  RecordingTap tap;
  UpperFilter filter;
  BodyTransform feed(&tap, &filter, false, true);
  EXPECT_FALSE(feed.feed("{\"a\":1}\n{\"type\":\"ADDED\",]\n"));
  EXPECT_EQ(feed.out(), "{\"A\":1}\n");  // the event before the break still goes out
  EXPECT_EQ(tap.events.size(), 1u);
  EXPECT_FALSE(filter.unframed.empty());
  EXPECT_FALSE(tap.unframed.empty());
  // Unfiltered, the client keeps its stream and only the tap is told.
  RecordingTap alone;
  BodyTransform unfiltered(&alone, nullptr, false, true);
  EXPECT_TRUE(unfiltered.feed("][\n"));
  EXPECT_FALSE(alone.unframed.empty());
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
