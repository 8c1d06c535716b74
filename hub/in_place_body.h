// InPlaceBody: an apiserver response's body, parsed where it was read. The upstream connection's
// buffer keeps the raw bytes (chunk headers and all) until the piece made of them has gone to the
// client; the piece is a view into that buffer, so a body byte is not copied between the read
// and the client's write (Beast's buffer_body copied each one into a relay buffer). Where a chunk
// header falls inside a piece, the bytes after it are moved down over it, so a piece is always
// contiguous; the apiserver writes a list as one chunk, so that is rare. Used by the
// ResponseRelay (hub/response_relay_impl.h), one per response; worker-thread only.
#pragma once

#include <cstddef>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/system/error_code.hpp>

#include "hub/exchange.h"

namespace yurthub::hub {

class InPlaceBody {
 public:
  // What one read asks room for.
  static constexpr std::size_t kReadBytes = 32 * 1024;
  // Raw bytes the parser may hold back (a chunk header, the trailer) before the body is refused
  // as malformed: every byte of a body proper is taken as soon as it is read.
  static constexpr std::size_t kMaxUnparsedBytes = 64 * 1024;

  // The body of the response whose head `rp` has read from `buffer`: what `buffer` holds is the
  // body's start (or the whole body).
  InPlaceBody(ResponseParser& rp, boost::beast::flat_buffer& buffer) : rp_(rp), buffer_(buffer) {}

  // Parses what the buffer holds and the parser has not seen, until the body is done, nothing is
  // left to parse, or the piece holds `enough` bytes. A parse error, if any.
  boost::system::error_code parse(std::size_t enough);
  // Room for the next read, then the bytes it read.
  boost::asio::mutable_buffer prepare() { return buffer_.prepare(kReadBytes); }
  void commit(std::size_t bytes) { buffer_.commit(bytes); }
  // The stream ended: a body read to the end of the stream is done; any other is cut short (an
  // error, as Beast's own read reports it).
  boost::system::error_code end_of_stream();
  // The body bytes parsed and not yet released, contiguous.
  std::string_view piece() const;
  // Lets go of the piece and the raw bytes it was parsed from; whatever follows stays buffered.
  void release();

 private:
  // Adds the body bytes of the last put, moving them down onto the piece if framing lies between.
  void take(std::string_view view);

  ResponseParser& rp_;
  boost::beast::flat_buffer& buffer_;
  // Offsets from the start of the buffer's data, which stay right when a read moves the data.
  std::size_t parsed_ = 0;       // raw bytes the parser has taken
  std::size_t piece_begin_ = 0;  // the piece: [piece_begin_, piece_end_)
  std::size_t piece_end_ = 0;
  // After the parser asked for more: the raw bytes it is given next, at least.
  static constexpr std::size_t kLeastFramingBytes = 5;  // "0\r\n\r\n"
  std::size_t held_back_ = 0;
};

}  // namespace yurthub::hub
