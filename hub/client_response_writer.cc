// Offline answers to the client; see client_response_writer.h.
#include "hub/client_response_writer.h"

#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/http.hpp>

#include "hub/client_stream.h"

namespace yurthub::hub {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

template <class Stream>
ClientResponseWriter<Stream>::ClientResponseWriter(std::shared_ptr<ClientConnection<Stream>> client,
                                                   unsigned version, bool keep_alive,
                                                   bool streaming)
    : client_(std::move(client)),
      version_(version),
      keep_alive_(keep_alive && !streaming && version >= 11),
      streaming_(streaming),
      chunked_(version >= 11) {
  if (streaming_) {
    client_->active.offline = true;
    client_->active.streaming = true;
    client_->active.wake = &client_->wake_timer;
  }
}

template <class Stream>
ClientResponseWriter<Stream>::~ClientResponseWriter() {
  if (streaming_) {
    stop_client_watch(*client_);
    client_->active.wake = nullptr;
  }
}

template <class Stream>
net::awaitable<bool> ClientResponseWriter<Stream>::send(std::string_view bytes) {
  if (failed_) co_return false;
  bool ok = false;
  if (streaming_) {
    ok = co_await write_streaming(client_, net::buffer(bytes.data(), bytes.size()));
  } else {
    beast::get_lowest_layer(client_->stream).expires_after(kClientIoTimeout);
    auto [ec, n] = co_await net::async_write(client_->stream, net::buffer(bytes.data(), bytes.size()), kNoThrow);
    ok = !ec;
  }
  failed_ = !ok;
  co_return ok;
}

template <class Stream>
net::awaitable<bool> ClientResponseWriter<Stream>::start(unsigned status, std::string_view content_type) {
  started_ = true;
  http::response<http::empty_body> res{static_cast<http::status>(status), version_};
  res.set(http::field::content_type, content_type);
  res.set(http::field::cache_control, "no-cache, private");
  if (chunked_) res.chunked(true);
  res.keep_alive(keep_alive_);
  http::response_serializer<http::empty_body> sr{res};
  if (streaming_) start_client_watch(client_);
  if (streaming_) arm_write_watchdog(client_);
  else beast::get_lowest_layer(client_->stream).expires_after(kClientIoTimeout);
  auto [ec, n] = co_await http::async_write_header(client_->stream, sr, kNoThrow);
  if (streaming_) client_->write_watchdog.cancel();
  failed_ = static_cast<bool>(ec);
  co_return !ec;
}

template <class Stream>
net::awaitable<bool> ClientResponseWriter<Stream>::write(std::string_view bytes) {
  if (bytes.empty()) co_return !failed_;
  body_bytes_ += bytes.size();
  if (!chunked_) co_return co_await send(bytes);
  char size_line[24];
  const int n = std::snprintf(size_line, sizeof size_line, "%zx\r\n", bytes.size());
  std::string piece;
  piece.reserve(static_cast<std::size_t>(n) + bytes.size() + 2);
  piece.append(size_line, static_cast<std::size_t>(n)).append(bytes).append("\r\n");
  co_return co_await send(piece);
}

template <class Stream>
net::awaitable<bool> ClientResponseWriter<Stream>::finish() {
  if (finished_) co_return !failed_;
  finished_ = true;
  if (!chunked_) co_return !failed_;
  co_return co_await send("0\r\n\r\n");
}

template <class Stream>
net::awaitable<std::optional<std::string>> ClientResponseWriter<Stream>::wait_until(
    std::chrono::steady_clock::time_point deadline) {
  auto& active = client_->active;
  if (active.stop_reason) co_return std::string(active.stop_reason);
  client_->wake_timer.expires_at(deadline);
  co_await client_->wake_timer.async_wait(kNoThrow);
  if (active.stop_reason) co_return std::string(active.stop_reason);
  co_return std::nullopt;
}

template <class Stream>
std::function<void()> ClientResponseWriter<Stream>::waker() {
  std::weak_ptr<ClientConnection<Stream>> weak = client_;
  return [weak, executor = client_->wake_timer.get_executor()] {
    net::post(executor, [weak] {
      if (auto client = weak.lock()) client->wake_timer.cancel();
    });
  };
}

template class ClientResponseWriter<PlainStream>;
template class ClientResponseWriter<TlsStream>;

}  // namespace yurthub::hub
