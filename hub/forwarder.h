// Forwarder: sends one client request to a healthy apiserver and streams the response back,
// both bodies forwarded as they arrive (never buffered whole). Watches and other long-running
// responses are relayed piece by piece and ended at once when the apiserver's stream breaks, its
// server turns unhealthy, the client leaves or the hub drains. Upgrades (exec, attach,
// port-forward) are tunnelled. Called by ProxySession for every request; worker-thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http.hpp>

#include "hub/client_connection.h"
#include "hub/request_info.h"
#include "hub/status.h"
#include "hub/worker.h"

namespace yurthub::hub {

namespace http = boost::beast::http;
using RequestParser = http::request_parser<http::buffer_body>;
using ResponseParser = http::response_parser<http::buffer_body>;
using ResponseSerializer = http::response_serializer<http::buffer_body>;

struct ForwardResult {
  unsigned status = 0;       // HTTP code sent to the client; 0 if no response was sent
  bool keep_alive = false;   // the client connection may carry another request
  std::uint64_t request_bytes = 0;
  std::uint64_t response_bytes = 0;
  std::optional<Failure> failure;    // set when the hub answered with its own error
  const char* stream_end = nullptr;  // why a stream ended before the apiserver ended it
};

template <class Stream>
class Forwarder {
 public:
  Forwarder(std::shared_ptr<ClientConnection<Stream>> client, Worker& worker);

  // Forwards the request whose header `parser` has read (its body, if any, is still unread).
  // `client_keep_alive`: the client allows another request on this connection.
  boost::asio::awaitable<ForwardResult> forward(RequestParser& parser, const RequestInfo& info,
                                                bool client_keep_alive);

 private:
  boost::asio::awaitable<bool> send_request(UpstreamConnection& up, RequestParser& parser,
                                            ForwardResult& result, bool& client_failed);
  boost::asio::awaitable<ForwardResult> relay_response(UpstreamConnectionPtr up,
                                                       ResponseParser& rp, RequestParser& parser,
                                                       const RequestInfo& info, bool keep_alive,
                                                       ForwardResult result);
  boost::asio::awaitable<ForwardResult> tunnel(UpstreamConnectionPtr up, ResponseParser& rp,
                                               ForwardResult result);
  boost::asio::awaitable<ForwardResult> fail(Failure failure, const std::string& detail,
                                             RequestParser& parser, bool keep_alive,
                                             ForwardResult result);
  boost::asio::awaitable<bool> write_to_client(ResponseSerializer& rs, bool streaming);
  boost::asio::awaitable<void> end_chunked_stream();
  void arm_write_watchdog();
  void start_client_watch();
  void stop_client_watch();
  void upstream_failed(std::size_t server, const char* kind);

  std::shared_ptr<ClientConnection<Stream>> client_;
  Worker& worker_;
  SharedState& shared_;
  unsigned client_version_ = 11;
};

extern template class Forwarder<PlainStream>;
extern template class Forwarder<TlsStream>;

}  // namespace yurthub::hub
