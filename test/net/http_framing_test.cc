// The hub's own HTTP/1.1 framing (net/http_framing.h): heads byte-identical to Beast's
// serializer, and bodies that Beast's parser reads back whole, raw or chunked.
#include "net/http_framing.h"

#include <gtest/gtest.h>

#include <sstream>

#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http.hpp>

namespace yurthub::net {
namespace {
namespace http = boost::beast::http;

// What Beast's serializer writes for a header.
template <bool isRequest>
std::string beast_head(const http::header<isRequest>& header) {
  std::ostringstream out;
  out << header;
  return out.str();
}

std::string joined(const std::array<boost::asio::const_buffer, 3>& buffers) {
  return boost::beast::buffers_to_string(buffers);
}

TEST(HttpFraming, RequestHeadIsWhatBeastWrites) {
  http::request<http::empty_body> req{http::verb::get,
                                      "/api/v1/pods?watch=true&fieldSelector=a%3Db", 11};
  req.set(http::field::host, "127.0.0.1:6443");
  req.set(http::field::user_agent, "kubelet/v1.32.4");
  req.set("X-Custom-Thing", "x y");
  const std::string head = message_head(req);
  EXPECT_EQ(head, beast_head(req.base()));
  EXPECT_TRUE(head.starts_with("GET /api/v1/pods?watch=true&fieldSelector=a%3Db HTTP/1.1\r\n"));
  EXPECT_TRUE(head.ends_with("x y\r\n\r\n"));
}

TEST(HttpFraming, ResponseHeadIsWhatBeastWrites) {
  // 20 and 1: an apiserver's "020" or "001", which Beast's parser reads; always three digits.
  for (unsigned code : {200u, 201u, 404u, 410u, 503u, 299u, 20u, 1u}) {
    for (unsigned version : {10u, 11u}) {
      http::response<http::empty_body> res{static_cast<http::status>(code), version};
      res.set(http::field::content_type, "application/json");
      res.chunked(true);
      const std::string head = message_head(res);
      EXPECT_EQ(head, beast_head(res.base())) << code << " " << version;
    }
  }
  http::response<http::empty_body> custom{http::status::ok, 11};
  custom.reason("Fine");
  const std::string head = message_head(custom);
  EXPECT_TRUE(head.starts_with("HTTP/1.1 200 Fine\r\n"));
}

TEST(HttpFraming, ChunkSizeIsHex) {
  std::string out;
  append_chunk_size(out, 0);
  append_chunk_size(out, 255);
  append_chunk_size(out, 65536);
  EXPECT_EQ(out, "0\r\nff\r\n10000\r\n");
  EXPECT_EQ(http_chunk("hello"), "5\r\nhello\r\n");
  EXPECT_EQ(http_chunk(""), "");  // an empty chunk would end the body
}

// Parses `wire` as one response with Beast; returns its body, or fails the test.
std::string parse_body(const std::string& wire) {
  http::response_parser<http::string_body> parser;
  parser.eager(true);
  boost::system::error_code ec;
  const std::size_t used = parser.put(boost::asio::buffer(wire), ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(parser.is_done());
  EXPECT_EQ(used, wire.size()) << "bytes after the message";
  return parser.get().body();
}

// A connection's head buffer is reused: a typical head goes into the memory the last one used;
// after a big head (a response header may reach 1 MiB) the memory is given back.
TEST(HttpFraming, AReusedHeadBufferKeepsItsMemoryUnlessAHeadWasBig) {
  http::response<http::empty_body> res{http::status::ok, 11};
  res.set(http::field::content_type, "application/json");
  std::string buffer;
  write_message_head(buffer, res);
  const char* memory = buffer.data();
  write_message_head(buffer, res);
  EXPECT_EQ(buffer.data(), memory);
  EXPECT_EQ(buffer, message_head(res));

  http::response<http::empty_body> big{http::status::ok, 11};
  for (int i = 0; i < 8; ++i) big.insert("X-Big-" + std::to_string(i), std::string(8 * 1024, 'b'));
  write_message_head(buffer, big);
  EXPECT_GT(buffer.capacity(), 64u * 1024);
  write_message_head(buffer, res);
  EXPECT_LE(buffer.capacity(), 16u * 1024);
  EXPECT_EQ(buffer, message_head(res));
}

TEST(HttpFraming, ChunkedBodyReadsBackWhole) {
  http::response<http::empty_body> res{http::status::ok, 11};
  res.chunked(true);
  const std::string head = message_head(res);
  std::string buffer = head;
  BodyFramer framer(buffer, true);
  std::string wire = joined(framer.frame("{\"a\":", false));
  EXPECT_TRUE(wire.starts_with(head + "5\r\n{\"a\":\r\n"));
  EXPECT_FALSE(framer.done());
  wire += joined(framer.frame("", false));  // nothing, not an empty chunk
  wire += joined(framer.frame("1}", true));
  EXPECT_TRUE(framer.done());
  EXPECT_TRUE(wire.ends_with("2\r\n1}\r\n0\r\n\r\n"));
  EXPECT_EQ(parse_body(wire), "{\"a\":1}");
}

TEST(HttpFraming, ChunkedBodyCanEndWithNoPiece) {
  std::string buffer = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  BodyFramer framer(buffer, true);
  std::string wire = joined(framer.frame("abc", false));
  wire += joined(framer.frame("", true));
  EXPECT_EQ(parse_body(wire), "abc");
  // A head alone (a watch's first write), then the events.
  std::string watch_buffer = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  BodyFramer watch(watch_buffer, true);
  std::string stream = joined(watch.frame("", false));
  EXPECT_TRUE(stream.ends_with("\r\n\r\n"));
  stream += joined(watch.frame("{\"type\":\"ADDED\"}\n", false)) + joined(watch.frame("", true));
  EXPECT_EQ(parse_body(stream), "{\"type\":\"ADDED\"}\n");
}

TEST(HttpFraming, RawBodyGoesOutAsItIs) {
  std::string buffer = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n";
  BodyFramer framer(buffer, false);
  std::string wire = joined(framer.frame("abc", false));
  wire += joined(framer.frame("def", true));
  EXPECT_EQ(wire, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabcdef");
  EXPECT_EQ(parse_body(wire), "abcdef");
  std::string empty_buffer = "HTTP/1.1 204 No Content\r\n\r\n";
  BodyFramer empty(empty_buffer, false);
  EXPECT_EQ(joined(empty.frame("", true)), "HTTP/1.1 204 No Content\r\n\r\n");
  EXPECT_TRUE(empty.done());
}

}  // namespace
}  // namespace yurthub::net
