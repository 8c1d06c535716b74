// Streaming an apiserver's response to the client; see response_relay.h. The member templates are
// in response_relay_impl.h, instantiated here for the hub's two client streams.
#include "hub/response_relay_impl.h"

namespace yurthub::hub {

bool shape_client_head(ResponseParser& rp, const ResponsePlan& plan, unsigned client_version) {
  auto& res = rp.get();
  if (plan.drop_body_headers) res.erase(http::field::content_encoding);
  // The framing headers say how the hub writes the body: from how its parser read the apiserver's
  // framing (all its Transfer-Encoding lines) and the plan, never as they came. Beast's message
  // reads only the first Transfer-Encoding line, and not past a token it cannot read, so
  // `Transfer-Encoding: gzip` + `Transfer-Encoding: chunked` was relayed as sent while the body
  // went out unchunked (upstream_response_fuzz).
  const bool chunked = plan.framing == ClientFraming::Chunked ||
                       (plan.framing == ClientFraming::AsSent && rp.chunked());
  std::optional<std::uint64_t> length;
  if (plan.framing == ClientFraming::AsSent && !chunked && !plan.drop_body_headers &&
      rp.content_length()) {
    length = *rp.content_length();
  }
  net::strip_hop_by_hop(res, false, net::BodyFraming{chunked, length});
  res.version(client_version);
  res.keep_alive(plan.keep_alive);
  return chunked;
}

template class ResponseRelay<net::PlainStream>;
template class ResponseRelay<net::TlsStream>;

}  // namespace yurthub::hub
