// Response writing; see http_io.h.
#include "test/fake_apiserver/http_io.h"

#include <ctime>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake {
namespace {

namespace asio = boost::asio;
constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
// Go's net/http buffers this much before switching to chunked encoding.
constexpr std::size_t kChunkingThreshold = 2048;
constexpr std::size_t kChunkSize = 64 * 1024;

std::string http_date() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

void arm_write_timeout(TlsStream& stream) {
  boost::beast::get_lowest_layer(stream).expires_after(kWriteTimeout);
}

}  // namespace

void set_common_headers(http::fields& f, std::string_view content_type) {
  f.set("Audit-Id", random_uuid());
  f.set(http::field::cache_control, "no-cache, private");
  f.set(http::field::content_type, content_type);
  f.set("X-Kubernetes-Pf-Flowschema-Uid", "56409868-64c4-4eea-bb65-c137fb15b861");
  f.set("X-Kubernetes-Pf-Prioritylevel-Uid", "52a743b1-21f7-4db0-8025-c2016ae23494");
  f.set(http::field::date, http_date());
}

asio::awaitable<ErrorCode> write_reply(TlsStream& stream, const Reply& reply, bool keep_alive) {
  if (reply.body.size() > kChunkingThreshold) {
    ErrorCode ec = co_await write_chunked_header(stream, reply.status, reply.content_type,
                                                 keep_alive, reply.headers);
    for (std::size_t pos = 0; !ec && pos < reply.body.size(); pos += kChunkSize) {
      std::string_view piece(reply.body.data() + pos,
                             std::min(kChunkSize, reply.body.size() - pos));
      ec = co_await write_chunk(stream, piece);
    }
    if (!ec) ec = co_await write_last_chunk(stream);
    co_return ec;
  }
  http::response<http::string_body> res{static_cast<http::status>(reply.status), 11};
  set_common_headers(res, reply.content_type);
  for (const auto& [name, value] : reply.headers) res.set(name, value);
  if (reply.status == 403) res.set("X-Content-Type-Options", "nosniff");
  res.keep_alive(keep_alive);
  res.body() = reply.body;
  res.prepare_payload();
  arm_write_timeout(stream);
  auto [ec, n] = co_await http::async_write(stream, res, kNoThrow);
  (void)n;
  co_return ec;
}

asio::awaitable<ErrorCode> write_chunked_header(TlsStream& stream, unsigned status,
                                                std::string_view content_type, bool keep_alive,
                                                const HeaderList& headers) {
  http::response<http::empty_body> res{static_cast<http::status>(status), 11};
  set_common_headers(res, content_type);
  for (const auto& [name, value] : headers) res.set(name, value);
  res.keep_alive(keep_alive);
  res.chunked(true);
  http::response_serializer<http::empty_body> sr{res};
  arm_write_timeout(stream);
  auto [ec, n] = co_await http::async_write_header(stream, sr, kNoThrow);
  (void)n;
  co_return ec;
}

asio::awaitable<ErrorCode> write_chunk(TlsStream& stream, std::string_view data) {
  arm_write_timeout(stream);
  auto [ec, n] = co_await asio::async_write(
      stream, http::make_chunk(asio::buffer(data.data(), data.size())), kNoThrow);
  (void)n;
  co_return ec;
}

asio::awaitable<ErrorCode> write_last_chunk(TlsStream& stream) {
  arm_write_timeout(stream);
  auto [ec, n] = co_await asio::async_write(stream, http::make_chunk_last(), kNoThrow);
  (void)n;
  co_return ec;
}

}  // namespace yurthub::fake
