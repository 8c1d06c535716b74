// Types shared by the pieces that serve one request: the Forwarder (choose a server, send the
// request, fall back to the cache), the ResponseRelay (stream the apiserver's response back) and
// the ProxySession (count it); and how the apiserver's response head is read.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <variant>

#include <boost/beast/http.hpp>

#include "hub/client_connection.h"
#include "hub/hooks/stream_end.h"
#include "hub/response_plan.h"
#include "kube/status.h"
#include "net/header_arena.h"
#include "net/view_body.h"

namespace yurthub::hub {

namespace http = boost::beast::http;
// The heads' fields live in a net::HeaderArena: the session's for the request, the forwarder's for
// the response (ClientConnection). Construct one with the arena's fresh allocator (its fields
// argument): Parser parser(std::piecewise_construct, std::tuple<>{}, std::tuple{arena.fresh()}).
// A request's body is read into the client connection's relay buffer (buffer_body); a response's
// is read where it arrived, in the upstream connection's buffer (net::ViewBody, InPlaceBody).
using RequestParser = http::request_parser<http::buffer_body, net::ArenaAllocator>;
using ResponseParser = http::response_parser<net::ViewBody, net::ArenaAllocator>;

// Readies `rp` to read an apiserver's response head as the Forwarder does: the head bounded by
// kMaxResponseHeaderBytes, the body unbounded (a watch or a big list is relayed piece by piece,
// never held whole), and no body after the head of the answer to a HEAD request.
inline void limit_response_parser(ResponseParser& rp, bool head_request) {
  rp.header_limit(kMaxResponseHeaderBytes);
  rp.body_limit(boost::none);
  if (head_request) rp.skip(true);
}

// What plan_response reads of the head `rp` has read. The content type and encoding only
// `with_types` (the cache or a filter reads the body): two lookups in Beast's field tree otherwise
// wasted.
inline ResponseHead response_head_facts(const ResponseParser& rp, bool with_types) {
  const auto& res = rp.get();
  ResponseHead head{res.result_int(), {}, {}, rp.chunked(), rp.content_length().has_value(),
                    rp.is_done()};
  if (!with_types) return head;
  // One walk of the fields, comparing their names as enums: a lookup by name descends Beast's
  // field tree comparing strings (about 350 instructions each, callgrind). The first of a name
  // counts, as the lookup's.
  bool type_seen = false, encoding_seen = false;
  for (const auto& field : res) {
    if (field.name() == http::field::content_type && !std::exchange(type_seen, true)) {
      head.content_type = std::string_view(field.value());
    } else if (field.name() == http::field::content_encoding &&
               !std::exchange(encoding_seen, true)) {
      head.content_encoding = std::string_view(field.value());
    }
  }
  return head;
}

// Why an exchange ended other than as its source ended it, if it did: the hub answered with its
// own error (a kube::Failure, counted in node_yurthub_request_failures_total), or a response
// was cut short (a StreamEnd, node_yurthub_streams_ended_total). One reason per exchange: a
// response that broke before any of it reached the client, and that the Forwarder then answered
// with its own error, ended with that error.
using EndReason = std::variant<std::monostate, kube::Failure, StreamEnd>;

struct ForwardResult {
  unsigned status = 0;      // HTTP code sent to the client; 0 if no response was sent
  bool keep_alive = false;  // the client connection may carry another request
  bool offline = false;     // answered by the cache
  std::uint64_t request_bytes = 0;
  std::uint64_t response_bytes = 0;
  EndReason end;  // set by whoever ends the exchange early; a later reason replaces it

  std::optional<kube::Failure> failure() const { return reason<kube::Failure>(); }
  std::optional<StreamEnd> stream_end() const { return reason<StreamEnd>(); }

 private:
  template <class Reason>
  std::optional<Reason> reason() const {
    if (const Reason* r = std::get_if<Reason>(&end)) return *r;
    return std::nullopt;
  }
};

}  // namespace yurthub::hub
