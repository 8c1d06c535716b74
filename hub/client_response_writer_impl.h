// The member templates of ClientResponseWriter (hub/client_response_writer.h); see there. Included
// by hub/client_response_writer.cc, which instantiates them for the hub's two client streams, and
// by the request path's tests over in-memory streams (test/hub/proxy_session_streams_test.cc).
//
// Offline answers to the client; see client_response_writer.h.
#pragma once

#include "hub/client_response_writer.h"

#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/http.hpp>

#include "hub/client_stream.h"
#include "net/http_framing.h"

namespace yurthub::hub {
namespace asio = boost::asio;
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
    client_->active.local_stream(&client_->wake_timer);
  }
}

template <class Stream>
ClientResponseWriter<Stream>::~ClientResponseWriter() {
  if (streaming_) {
    stop_client_watch(*client_);
    client_->active.local_stream(nullptr);
  }
}

template <class Stream>
asio::awaitable<bool> ClientResponseWriter<Stream>::send(std::string_view piece, bool last) {
  if (failed_ || !framer_) co_return false;
  const auto buffers = framer_->frame(piece, last);
  if (asio::buffer_size(buffers) == 0) co_return true;
  const bool ok = co_await write_to_client(client_, buffers, streaming_);
  failed_ = !ok;
  co_return ok;
}

template <class Stream>
asio::awaitable<bool> ClientResponseWriter<Stream>::start(unsigned status,
                                                          std::string_view content_type) {
  http::response<http::empty_body> res{static_cast<http::status>(status), version_};
  res.set(http::field::content_type, content_type);
  res.set(http::field::cache_control, "no-cache, private");
  if (chunked_) res.chunked(true);
  res.keep_alive(keep_alive_);
  net::write_message_head(client_->response_head, res);
  framer_.emplace(client_->response_head, chunked_);
  if (!streaming_) co_return true;  // the head goes out with the first piece
  // A watch's client must see the head at once, not with the first event.
  start_client_watch(client_);
  co_return co_await send({}, false);
}

template <class Stream>
asio::awaitable<bool> ClientResponseWriter<Stream>::write(std::string_view bytes) {
  if (bytes.empty()) co_return !failed_;
  body_bytes_ += bytes.size();
  co_return co_await send(bytes, false);
}

template <class Stream>
asio::awaitable<bool> ClientResponseWriter<Stream>::finish() {
  if (finished_) co_return !failed_;
  finished_ = true;
  co_return co_await send({}, true);
}

template <class Stream>
asio::awaitable<std::optional<StreamEnd>> ClientResponseWriter<Stream>::wait_until(
    std::chrono::steady_clock::time_point deadline) {
  auto& active = client_->active;
  if (active.stopped()) co_return active.stopped();
  client_->wake_timer.expires_at(deadline);
  co_await client_->wake_timer.async_wait(net::kNoThrow);
  if (active.stopped()) co_return active.stopped();
  co_return std::nullopt;
}

template <class Stream>
std::function<void()> ClientResponseWriter<Stream>::waker() {
  std::weak_ptr<ClientConnection<Stream>> weak = client_;
  return [weak, executor = client_->wake_timer.get_executor()] {
    asio::post(executor, [weak] {
      if (auto client = weak.lock()) client->wake_timer.cancel();
    });
  };
}

}  // namespace yurthub::hub
