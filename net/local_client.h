// A one-shot HTTP/1.1 request to the hub's own plain proxy port, for the hub's background work
// that must look like a client on the node: the journal's replay sends each offline write this
// way, so the Forwarder picks the server and the identity exactly as for the original request.
// Coroutine; runs on the executor given. Every step is bounded by `timeout`, the response body
// by kMaxLocalResponseBytes.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "base/result.h"

namespace yurthub::net {

inline constexpr std::size_t kMaxLocalResponseBytes = 8u << 20;

struct LocalRequest {
  std::string method;                                        // "PATCH", "PUT", "POST", ...
  std::string target;                                        // origin form: path and query
  std::vector<std::pair<std::string, std::string>> headers;  // empty values are not sent
  std::string body;
};

struct LocalResponse {
  unsigned status = 0;
  std::string body;
};

// Sends `request` to host:port (an IP address) and reads the whole response. An error means no
// response was read (connect, write or read failed, or timed out): the request may or may not
// have reached the apiserver.
boost::asio::awaitable<Result<LocalResponse>> local_request(boost::asio::any_io_executor executor,
                                                            std::string host, unsigned short port,
                                                            LocalRequest request,
                                                            std::chrono::milliseconds timeout);

}  // namespace yurthub::net
