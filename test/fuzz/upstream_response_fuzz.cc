// Fuzz target for how the hub reads an apiserver's response head and passes it on: Beast's
// response_parser as the Forwarder configures it (hub/exchange.h limit_response_parser), fed as
// async_read_header feeds it; response_head_facts and plan_response (hub/response_plan.h); the
// relay's edit of the head for the client (hub/response_relay.h shape_client_head), written by
// net/http_framing.h. The hub relays the apiserver's body by how its parser read the head, and
// the client reads it by the head the hub writes: where the two differ, the client's connection
// is desynchronised. The first byte picks the exchange (bit 0: a HEAD request; bits 1 and 2: the
// cache and a filter want the body; bit 3: an HTTP/1.0 client; bit 4: the client keeps its
// connection; bit 5: a long-running request) and, with the size, how the bytes arrive; the rest
// is what the apiserver sent. Oracles: the head reads the same whole and in pieces; the head the
// client gets parses, with the same status, and announces the body as the hub writes it (chunked
// or not; a Content-Length only for a body relayed as it came, of that length; neither only when
// the connection closes after it) and the connection's fate the hub decided.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>

#include "hub/exchange.h"
#include "hub/response_plan.h"
#include "hub/response_relay.h"
#include "net/header_arena.h"
#include "net/http_framing.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;
namespace http = boost::beast::http;
namespace asio = boost::asio;

namespace {

// Feeds `pieces` to `rp` as async_read_header does: each piece read is appended to the buffer,
// the parser takes what it can of the buffer, until the head is done, an error, or the end of
// the stream.
boost::system::error_code read_head(hub::ResponseParser& rp,
                                    const std::vector<std::string_view>& pieces) {
  std::string buffer;
  boost::system::error_code ec;
  for (std::string_view piece : pieces) {
    buffer.append(piece);
    const std::size_t used = rp.put(asio::buffer(buffer), ec);
    buffer.erase(0, used);
    if (ec == http::error::need_more) continue;
    return ec;
  }
  // The stream ended: Beast's read ends in end_of_stream when nothing came, else put_eof.
  if (!rp.got_some()) return http::error::end_of_stream;
  rp.put_eof(ec);
  return ec;
}

// What the parser read, as text (for the split oracle).
std::string transcript(const hub::ResponseParser& rp, const boost::system::error_code& ec) {
  if (ec || !rp.is_header_done()) return "error: " + ec.message();
  const auto& res = rp.get();
  std::string out = std::to_string(res.result_int()) + " " + std::string(res.reason()) + " " +
                    std::to_string(res.version()) + (rp.chunked() ? " chunked" : "") +
                    (rp.content_length() ? " length " + std::to_string(*rp.content_length()) : "") +
                    (rp.is_done() ? " done" : "") + (rp.keep_alive() ? " keep-alive" : "") + "\n";
  for (const auto& field : res) {
    out.append(field.name_string()).append(": ").append(field.value()).append("\n");
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned flags = data[0];
  const bool head_request = flags & 1;
  const std::string_view in = fuzz::as_text(data + 1, size - 1);

  // As the Forwarder: one arena per connection, the parser built on its fresh allocator.
  net::HeaderArena whole_arena, arena;
  hub::ResponseParser whole(std::piecewise_construct, std::tuple<>{},
                            std::tuple{whole_arena.fresh()});
  hub::limit_response_parser(whole, head_request);
  const auto whole_ec = read_head(whole, {in});
  hub::ResponseParser rp(std::piecewise_construct, std::tuple<>{}, std::tuple{arena.fresh()});
  hub::limit_response_parser(rp, head_request);
  const auto ec = read_head(rp, fuzz::chunks(in, static_cast<unsigned>(size)));
  // Beast parses the start line of a first read at once, later ones only with the whole head, so
  // a malformed head that never ends fails as malformed or as cut off depending on the pieces;
  // any head that ends must read the same.
  if (whole_ec != http::error::partial_message && ec != http::error::partial_message) {
    fuzz::check(transcript(whole, whole_ec) == transcript(rp, ec),
                "the head reads differently whole and in pieces");
  }
  if (ec || !rp.is_header_done()) return 0;

  const hub::RequestPlan request = hub::plan_request(head_request, flags & 2, flags & 4, false);
  const hub::ClientSide client{(flags & 8) ? 10u : 11u, (flags & 16) != 0, (flags & 32) != 0,
                               false};
  const hub::ResponsePlan plan =
      hub::plan_response(request, hub::response_head_facts(rp, request.ask_json()), client);
  const unsigned status = rp.get().result_int();
  const bool upstream_chunked = rp.chunked();
  const auto upstream_length = rp.content_length();
  // What the relay's BodyFramer writes; the head must say the same.
  const bool hub_chunked = hub::shape_client_head(rp, plan, client.version);
  fuzz::check(rp.get().chunked() == hub_chunked, "the head says other framing than the relay's");
  std::string head;
  net::write_message_head(head, rp.get());

  http::response_parser<http::empty_body> again;
  again.header_limit(4 * hub::kMaxResponseHeaderBytes);
  again.body_limit(boost::none);
  if (head_request) again.skip(true);
  boost::system::error_code client_ec;
  again.put(asio::buffer(head), client_ec);
  fuzz::check(!client_ec && again.is_header_done(),
              "the head written to the client does not parse");
  fuzz::check(again.get().result_int() == status, "the status changed");
  fuzz::check(again.keep_alive() == plan.keep_alive, "the client is told another connection fate");
  const bool has_body = !head_request && status / 100 != 1 && status != 204 && status != 304;
  if (!has_body) return 0;
  fuzz::check(again.chunked() == hub_chunked, "the client reads chunks the hub does not write");
  if (hub_chunked) return 0;
  if (again.content_length()) {
    fuzz::check(!plan.filter && !upstream_chunked && upstream_length == again.content_length(),
                "the client expects another length than the hub relays");
  } else {
    fuzz::check(!plan.keep_alive, "a body without length or chunks on a connection kept open");
  }
  return 0;
}
