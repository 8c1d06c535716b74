// Types shared by the pieces that serve one request: the Forwarder (choose a server, send the
// request, fall back to the cache), the ResponseRelay (stream the apiserver's response back) and
// the ProxySession (count it).
#pragma once

#include <cstdint>
#include <optional>

#include <boost/beast/http.hpp>

#include "hub/hooks/stream_end.h"
#include "kube/status.h"
#include "net/header_arena.h"

namespace yurthub::hub {

namespace http = boost::beast::http;
// The heads' fields live in a net::HeaderArena: the session's for the request, the forwarder's for
// the response (ClientConnection). Construct one with the arena's fresh allocator (its fields
// argument): Parser parser(std::piecewise_construct, std::tuple<>{}, std::tuple{arena.fresh()}).
using RequestParser = http::request_parser<http::buffer_body, net::ArenaAllocator>;
using ResponseParser = http::response_parser<http::buffer_body, net::ArenaAllocator>;

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
