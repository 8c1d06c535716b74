// ClientResponseWriter: the hub's ResponseWriter, through which the cache answers a client while
// offline. Writes a chunked response (or close-delimited for HTTP/1.0 clients). A streaming
// response (an offline watch) registers as the connection's active exchange, so it ends when a
// server turns healthy, the client leaves or the hub drains. Created by the Forwarder per
// request; worker-thread only.
#pragma once

#include <memory>

#include "hub/client_connection.h"
#include "hub/hooks/cache_hooks.h"
#include "net/http_framing.h"

namespace yurthub::hub {

template <class Stream>
class ClientResponseWriter : public ResponseWriter {
 public:
  // `keep_alive`: the client may reuse the connection once the response is complete.
  ClientResponseWriter(std::shared_ptr<ClientConnection<Stream>> client, unsigned version,
                       bool keep_alive, bool streaming);
  ~ClientResponseWriter() override;

  boost::asio::awaitable<bool> start(unsigned status, std::string_view content_type) override;
  boost::asio::awaitable<bool> write(std::string_view bytes) override;
  boost::asio::awaitable<bool> finish() override;
  boost::asio::awaitable<std::optional<StreamEnd>> wait_until(
      std::chrono::steady_clock::time_point deadline) override;
  std::function<void()> waker() override;

  bool completed() const { return finished_ && !failed_; }
  std::uint64_t body_bytes() const { return body_bytes_; }

 private:
  // Writes `piece` framed (with the head, the first time); `last` ends the body.
  boost::asio::awaitable<bool> send(std::string_view piece, bool last);

  std::shared_ptr<ClientConnection<Stream>> client_;
  unsigned version_;
  bool keep_alive_;
  bool streaming_;
  bool chunked_;
  std::optional<net::BodyFramer> framer_;  // from start()
  bool finished_ = false;
  bool failed_ = false;
  std::uint64_t body_bytes_ = 0;
};

extern template class ClientResponseWriter<net::PlainStream>;
extern template class ClientResponseWriter<net::TlsStream>;

}  // namespace yurthub::hub
