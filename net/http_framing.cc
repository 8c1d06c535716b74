// HTTP/1.1 framing of relayed messages; see http_framing.h.
#include "net/http_framing.h"

#include <charconv>
#include <cstring>

#include "net/header_arena.h"

namespace yurthub::net {
namespace http = boost::beast::http;

namespace {

// Room for a typical head in one allocation.
constexpr std::size_t kHeadReserve = 512;
// A reused buffer that once held a head bigger than this is given back rather than kept: one
// large head (up to the 1 MiB response header limit) must not stay with its connection.
constexpr std::size_t kMaxKeptHeadCapacity = 16 * 1024;

// Empties `out` for the next head.
void reset_head(std::string& out) {
  if (out.capacity() > kMaxKeptHeadCapacity) std::string().swap(out);
  out.clear();
  out.reserve(kHeadReserve);
}

void append_version(std::string& out, unsigned version) {
  const char text[] = {'H', 'T',
                       'T', 'P',
                       '/', static_cast<char>('0' + version / 10),
                       '.', static_cast<char>('0' + version % 10)};
  out.append(text, sizeof text);
}

template <class Fields>
void append_fields(std::string& out, const Fields& fields) {
  // Sized first, then copied: four appends per field each checked and maybe grew the string.
  std::size_t size = 2;  // the blank line
  for (const auto& field : fields) size += field.name_string().size() + field.value().size() + 4;
  const std::size_t at = out.size();
  out.resize(at + size);
  char* cursor = out.data() + at;
  auto put = [&cursor](boost::beast::string_view text) {
    std::memcpy(cursor, text.data(), text.size());
    cursor += text.size();
  };
  for (const auto& field : fields) {
    put(field.name_string());
    put(": ");
    put(field.value());
    put("\r\n");
  }
  put("\r\n");
}

}  // namespace

template <class Fields>
void write_message_head(std::string& out, const http::request_header<Fields>& header) {
  reset_head(out);
  out.append(header.method_string());
  out.push_back(' ');
  out.append(header.target());
  out.push_back(' ');
  append_version(out, header.version());
  out.append("\r\n");
  append_fields(out, header);
}

template <class Fields>
void write_message_head(std::string& out, const http::response_header<Fields>& header) {
  reset_head(out);
  append_version(out, header.version());
  // Three digits, as Beast writes them (RFC 9112 §4: status-code = 3DIGIT): an apiserver's "020"
  // parses as 20, which the client could not read back written as "20" (upstream_response_fuzz).
  const unsigned code = header.result_int();  // at most 999: Beast reads three digits
  const char digits[] = {' ', static_cast<char>('0' + code / 100 % 10),
                         static_cast<char>('0' + code / 10 % 10),
                         static_cast<char>('0' + code % 10), ' '};
  out.append(digits, sizeof digits);
  out.append(header.reason());
  out.append("\r\n");
  append_fields(out, header);
}

template void write_message_head(std::string&, const http::request_header<http::fields>&);
template void write_message_head(std::string&, const http::response_header<http::fields>&);
template void write_message_head(std::string&, const http::request_header<ArenaFields>&);
template void write_message_head(std::string&, const http::response_header<ArenaFields>&);

void append_chunk_size(std::string& out, std::size_t size) {
  char hex[2 * sizeof size];
  const auto [end, ec] = std::to_chars(hex, hex + sizeof hex, size, 16);
  out.append(hex, end);
  out.append("\r\n");
}

std::string http_chunk(std::string_view bytes) {
  std::string chunk;
  if (bytes.empty()) return chunk;
  chunk.reserve(bytes.size() + 20);
  append_chunk_size(chunk, bytes.size());
  chunk.append(bytes).append("\r\n");
  return chunk;
}

BodyFramer::BodyFramer(std::string& buffer, bool chunked) : prefix_(buffer), chunked_(chunked) {}

std::array<boost::asio::const_buffer, 3> BodyFramer::frame(std::string_view piece, bool last) {
  // After a chunk's data: its CRLF, then (for the last piece) the last chunk.
  static constexpr std::string_view kChunkEnd = "\r\n0\r\n\r\n";
  if (!head_pending_) prefix_.clear();
  head_pending_ = false;
  done_ = last;
  std::string_view suffix;
  if (chunked_) {
    if (!piece.empty()) {
      append_chunk_size(prefix_, piece.size());
      suffix = last ? kChunkEnd : kChunkEnd.substr(0, 2);
    } else if (last) {
      suffix = kLastChunk;
    }
  }
  return {boost::asio::buffer(prefix_), boost::asio::buffer(piece.data(), piece.size()),
          boost::asio::buffer(suffix.data(), suffix.size())};
}

}  // namespace yurthub::net
