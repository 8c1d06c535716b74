// InPlaceBody (hub/in_place_body.h): an apiserver's response body parsed in the upstream
// connection's buffer, as the ResponseRelay reads it. Bodies arrive in reads of every size; the
// pieces must add up to the body, a piece of one chunk must be the bytes where they were read,
// and what follows the body must stay buffered for the pool's check.
#include "hub/in_place_body.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include <boost/beast/http/error.hpp>

#include "test/net/chunked.h"

namespace yurthub::hub {
namespace {

namespace http = boost::beast::http;

// A response being read: the parser, the connection's buffer, and the body over both.
class Reading {
 public:
  // Reads the head from the front of `first` (as async_read_header does: the rest stays buffered).
  explicit Reading(std::string_view first)
      : rp_(std::piecewise_construct, std::tuple<>{}, std::tuple{arena_.fresh()}) {
    limit_response_parser(rp_, false);
    arrive(first);
    boost::system::error_code ec;
    buffer_.consume(rp_.put(buffer_.data(), ec));
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(rp_.is_header_done());
    body_.emplace(rp_, buffer_);
  }

  // Bytes the next read brings.
  void arrive(std::string_view bytes) {
    auto room = buffer_.prepare(bytes.size());
    std::memcpy(room.data(), bytes.data(), bytes.size());
    buffer_.commit(bytes.size());
  }

  InPlaceBody& body() { return *body_; }
  ResponseParser& parser() { return rp_; }
  boost::beast::flat_buffer& buffer() { return buffer_; }

  // Parses what arrived and takes the piece, as the relay does before each write: the piece's
  // bytes, or "" when none.
  std::string take(std::size_t enough = 1 << 20) {
    const auto ec = body_->parse(enough);
    EXPECT_FALSE(ec) << ec.message();
    std::string piece(body_->piece());
    body_->release();
    return piece;
  }

 private:
  net::HeaderArena arena_;
  ResponseParser rp_;
  boost::beast::flat_buffer buffer_;
  std::optional<InPlaceBody> body_;
};

std::string chunked(const std::vector<std::string>& chunks) {
  std::string out;
  for (const auto& data : chunks) out += test_support::chunk(data);
  return out + "0\r\n\r\n";
}

const std::string kChunkedHead = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";

TEST(InPlaceBodyTest, ChunksInReadsOfEverySizeAddUpToTheBody) {
  const std::vector<std::string> chunks = {std::string(5000, 'a'), "b", std::string(70000, 'c'),
                                           std::string(300, 'd')};
  std::string body;
  for (const auto& chunk : chunks) body += chunk;
  const std::string wire = chunked(chunks);
  for (std::size_t read : {1u, 7u, 4096u, 16384u, 100000u}) {
    Reading reading(kChunkedHead);
    std::string got;
    for (std::size_t at = 0; at < wire.size(); at += read) {
      reading.arrive(std::string_view(wire).substr(at, read));
      got += reading.take();
    }
    EXPECT_TRUE(reading.parser().is_done()) << "reads of " << read;
    EXPECT_EQ(got, body) << "reads of " << read;
    EXPECT_EQ(reading.buffer().size(), 0u) << "reads of " << read;
  }
}

TEST(InPlaceBodyTest, APieceOfOneChunkIsTheBytesWhereTheyWereRead) {
  Reading reading(kChunkedHead + "a\r\n0123456789");
  ASSERT_FALSE(reading.body().parse(1 << 20));
  const std::string_view piece = reading.body().piece();
  const auto* raw = static_cast<const char*>(reading.buffer().data().data());
  EXPECT_EQ(piece, "0123456789");
  EXPECT_EQ(piece.data(), raw + 3);  // after "a\r\n": not copied anywhere
}

TEST(InPlaceBodyTest, TwoChunksInOneReadMakeOnePiece) {
  Reading reading(kChunkedHead + "3\r\nabc\r\n4\r\ndefg\r\n");
  EXPECT_EQ(reading.take(), "abcdefg");
}

TEST(InPlaceBodyTest, APieceStopsOnceItHasEnough) {
  Reading reading(kChunkedHead + "3\r\nabc\r\n3\r\ndef\r\n3\r\nghi\r\n0\r\n\r\n");
  EXPECT_EQ(reading.take(4), "abcdef");
  EXPECT_FALSE(reading.parser().is_done());
  EXPECT_EQ(reading.take(4), "ghi");
  EXPECT_TRUE(reading.parser().is_done());
}

TEST(InPlaceBodyTest, AChunkHeaderCutByTheReadWaitsForTheRest) {
  Reading reading(kChunkedHead + "3\r\nabc\r\n1");
  EXPECT_EQ(reading.take(), "abc");
  EXPECT_EQ(reading.buffer().size(), 3u);  // "\r\n1": held until the header is whole
  reading.arrive("0\r\n0123456789abcdef\r\n0\r\n\r\n");
  EXPECT_EQ(reading.take(), "0123456789abcdef");
  EXPECT_TRUE(reading.parser().is_done());
}

TEST(InPlaceBodyTest, WhatFollowsTheBodyStaysBuffered) {
  Reading reading("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 200 OK\r\n");
  EXPECT_EQ(reading.take(), "hello");
  EXPECT_TRUE(reading.parser().is_done());
  EXPECT_EQ(reading.buffer().size(), std::strlen("HTTP/1.1 200 OK\r\n"));
}

TEST(InPlaceBodyTest, ABodyReadToTheEndOfTheStreamIsDoneThere) {
  Reading reading("HTTP/1.1 200 OK\r\n\r\nhello");
  EXPECT_EQ(reading.take(), "hello");
  EXPECT_FALSE(reading.parser().is_done());
  EXPECT_FALSE(reading.body().end_of_stream());
  EXPECT_TRUE(reading.parser().is_done());
}

TEST(InPlaceBodyTest, AChunkedBodyCutByTheEndOfTheStreamIsAnError) {
  Reading reading(kChunkedHead + "a\r\n01234");
  EXPECT_EQ(reading.take(), "01234");
  EXPECT_EQ(reading.body().end_of_stream(), http::error::partial_message);
}

TEST(InPlaceBodyTest, AChunkHeaderThatNeverEndsIsRefused) {
  Reading reading(kChunkedHead + "3;ext=");
  boost::system::error_code ec;
  for (int read = 0; read < 100 && !ec; ++read) {
    reading.arrive(std::string(4096, 'x'));
    ec = reading.body().parse(1 << 20);
  }
  EXPECT_EQ(ec, http::error::buffer_overflow);
  EXPECT_LE(reading.buffer().size(), InPlaceBody::kMaxUnparsedBytes + 2 * 4096);
}

TEST(InPlaceBodyTest, AMalformedChunkIsAnError) {
  Reading reading(kChunkedHead + "zz\r\nabc");
  EXPECT_TRUE(reading.body().parse(1 << 20));
}

}  // namespace
}  // namespace yurthub::hub
