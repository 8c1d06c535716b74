// HTTP/1.1 framing of relayed messages: a message head written into one contiguous buffer, and
// body pieces sent raw or as chunks, with the head, the piece and the chunk framing gathered into
// one write. Used by the Forwarder (request to the apiserver), the ResponseRelay (response to the
// client), the ClientResponseWriter (offline answers) and the watch corrections.
//
// Why not Beast's serializer on these paths: it presents a head as a sequence of ~4 small buffers
// per field and walks that sequence again for every write step; a profile of the small GET
// (callgrind, docs/benchmarks.md) put it at about a third of the hub's instructions per request.
// Parsing stays with Beast.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>

namespace yurthub::net {

// The wire form of a header: its start line, its fields as stored, the blank line. write_* puts it
// in `out` in place of what was there (a reused buffer keeps its capacity). Instantiated for heads
// on the heap and in a HeaderArena (net/header_arena.h).
template <class Fields>
void write_message_head(std::string& out, const boost::beast::http::request_header<Fields>& header);
template <class Fields>
void write_message_head(std::string& out,
                        const boost::beast::http::response_header<Fields>& header);
template <bool isRequest, class Fields>
std::string message_head(const boost::beast::http::header<isRequest, Fields>& header) {
  std::string out;
  write_message_head(out, header);
  return out;
}

// Appends a chunk's size line: "<size in hex>\r\n".
void append_chunk_size(std::string& out, std::size_t size);

inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

// `bytes` framed as one HTTP chunk (nothing for no bytes: an empty chunk would end the body).
std::string http_chunk(std::string_view bytes);

// Frames one message body: the head goes out with the first piece; with `chunked` each piece is
// a chunk and the last piece also carries the last chunk, otherwise pieces go out as they are
// (Content-Length, or a body the closing connection ends).
class BodyFramer {
 public:
  // `buffer` holds the head (write_message_head) and is the framer's scratch from then on (chunk
  // size lines), so a buffer the connection reuses costs no allocation per message. It must
  // outlive the framer, and nothing else may use it meanwhile.
  BodyFramer(std::string& buffer, bool chunked);

  // The buffers that send `piece` (after the head, the first time); `last`: the body ends with
  // it. They stay valid until the next call.
  std::array<boost::asio::const_buffer, 3> frame(std::string_view piece, bool last);
  // The last piece has been framed.
  bool done() const { return done_; }
  // The head has been framed (so it may have reached the client).
  bool head_framed() const { return !head_pending_; }

 private:
  std::string& prefix_;  // the head (first time only), then the chunk size line
  bool chunked_;
  bool head_pending_ = true;
  bool done_ = false;
};

}  // namespace yurthub::net
