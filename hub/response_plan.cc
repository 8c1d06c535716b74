// The hub's decisions about one response; see response_plan.h.
#include "hub/response_plan.h"

#include <boost/beast/core/string.hpp>

#include "kube/media_type.h"

namespace yurthub::hub {

RequestPlan plan_request(bool head_only, bool cacheable, bool has_filter, bool wants_body) {
  RequestPlan plan;
  plan.cache = cacheable && !head_only;
  plan.filter = has_filter && !head_only;
  plan.keyed_body = plan.cache && wants_body;
  return plan;
}

namespace {

bool is_gzip(std::string_view encoding) { return boost::beast::iequals(encoding, "gzip"); }

// No content coding: none named, or `identity` (RFC 9110 §8.4.1).
bool is_plain(std::string_view encoding) {
  return encoding.empty() || boost::beast::iequals(encoding, "identity");
}

// A successful response with a body: what the cache and the filters read. A Status error
// passes as sent.
bool successful_with_body(const ResponseHead& head) {
  return head.code / 100 == 2 && head.code != 204;
}

// Why the cache and the filters cannot read a successful body, or null if they can: only plain
// JSON, sent as is or gzipped.
const char* unreadable(const ResponseHead& head) {
  if (!kube::is_plain_json(head.content_type)) return "not plain JSON";
  if (!is_plain(head.content_encoding) && !is_gzip(head.content_encoding))
    return "an encoding other than gzip";
  return nullptr;
}

}  // namespace

ResponsePlan plan_response(const RequestPlan& request, const ResponseHead& head,
                           const ClientSide& client) {
  ResponsePlan plan;
  plan.streaming = client.long_running && head.code == 200;
  if ((request.cache || request.filter) && successful_with_body(head)) {
    plan.unread_because = unreadable(head);
    const bool readable = plan.unread_because == nullptr;
    plan.tap = request.cache && readable;
    plan.filter = request.filter && readable;
    plan.decode_gzip = readable && is_gzip(head.content_encoding);
  }
  plan.client_encoded = !is_plain(head.content_encoding) && !plan.filter;
  plan.drop_body_headers = plan.filter;
  plan.keep_alive = client.keep_alive && !plan.streaming && !client.draining;
  if (client.version < 11) {
    // An HTTP/1.0 client reads until the connection closes.
    plan.keep_alive = false;
    if (head.chunked || plan.filter) plan.framing = ClientFraming::UntilClose;
  } else if (plan.filter || (!head.body_done && !head.chunked && !head.has_length)) {
    // The filter's output has a new length; a body the apiserver delimited by closing is
    // re-framed so the client can reuse its connection.
    plan.framing = ClientFraming::Chunked;
  }
  return plan;
}

}  // namespace yurthub::hub
