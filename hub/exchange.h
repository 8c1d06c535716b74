// Types shared by the pieces that serve one request: the Forwarder (choose a server, send the
// request, fall back to the cache), the ResponseRelay (stream the apiserver's response back) and
// the ProxySession (count it).
#pragma once

#include <cstdint>
#include <optional>

#include <boost/beast/http.hpp>

#include "hub/hooks/stream_end.h"
#include "kube/status.h"

namespace yurthub::hub {

namespace http = boost::beast::http;
using RequestParser = http::request_parser<http::buffer_body>;
using ResponseParser = http::response_parser<http::buffer_body>;

struct ForwardResult {
  unsigned status = 0;      // HTTP code sent to the client; 0 if no response was sent
  bool keep_alive = false;  // the client connection may carry another request
  bool offline = false;     // answered by the cache
  std::uint64_t request_bytes = 0;
  std::uint64_t response_bytes = 0;
  std::optional<kube::Failure> failure;  // set when the hub answered with its own error
  std::optional<StreamEnd> stream_end;   // why a response ended before its source ended it
};

}  // namespace yurthub::hub
