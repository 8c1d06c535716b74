// Fuzz target for how the hub reads an apiserver's response body: hub/in_place_body.h over the
// relay's parser (hub/exchange.h ResponseParser, net::ViewBody), fed read by read as the
// ResponseRelay feeds it, each piece released as after the client's write. The first byte picks
// how the bytes arrive and how much a piece gathers; the rest is what the apiserver sent (head
// and body). Oracle: Beast's own parser, reading the whole response at once: the pieces
// add up to what it reads, the body ends where it ends, and an error it does not see is only the
// bound on bytes held back unparsed; and that bound holds.
#include <cstring>
#include <string>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "hub/exchange.h"
#include "hub/in_place_body.h"
#include "net/header_arena.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;
namespace http = boost::beast::http;
namespace asio = boost::asio;

namespace {

struct Read {
  std::string body;
  bool done = false;
  bool failed = false;
};

// Beast's parser, eager, over the whole response (into a dynamic body: a string body reserves
// whatever Content-Length says).
Read whole(std::string_view in) {
  http::response_parser<http::dynamic_body> parser;
  parser.header_limit(hub::kMaxResponseHeaderBytes);
  parser.body_limit(boost::none);
  parser.eager(true);
  boost::system::error_code ec;
  parser.put(asio::buffer(in.data(), in.size()), ec);
  if (ec == http::error::need_more) ec = {};
  if (!ec && parser.is_header_done() && !parser.is_done()) parser.put_eof(ec);
  return {boost::beast::buffers_to_string(parser.get().body().data()), parser.is_done(),
          ec || !parser.is_header_done()};
}

void arrive(boost::beast::flat_buffer& buffer, std::string_view bytes) {
  auto room = buffer.prepare(bytes.size());
  std::memcpy(room.data(), bytes.data(), bytes.size());
  buffer.commit(bytes.size());
}

// The relay's way, the bytes arriving as `pieces`.
Read in_place(const std::vector<std::string_view>& pieces, std::size_t enough) {
  net::HeaderArena arena;
  hub::ResponseParser rp(std::piecewise_construct, std::tuple<>{}, std::tuple{arena.fresh()});
  hub::limit_response_parser(rp, false);
  boost::beast::flat_buffer buffer;
  std::optional<hub::InPlaceBody> body;
  Read read;
  boost::system::error_code ec;
  for (std::string_view piece : pieces) {
    arrive(buffer, piece);
    if (!body) {
      buffer.consume(rp.put(buffer.data(), ec));
      if (ec == http::error::need_more) ec = {};
      if (ec) return {read.body, false, true};
      if (!rp.is_header_done()) continue;
      body.emplace(rp, buffer);
    }
    ec = body->parse(enough);
    read.body.append(body->piece());
    body->release();
    if (ec) return {read.body, false, true};
    fuzz::check(buffer.size() <= hub::InPlaceBody::kMaxUnparsedBytes,
                "more raw bytes held back than the bound");
    if (rp.is_done()) return {read.body, true, false};
  }
  if (!body) return {read.body, false, true};
  // The pieces left in the buffer (a piece stops at `enough`), then the end of the stream.
  while (!rp.is_done() && !(ec = body->parse(enough)) && !body->piece().empty()) {
    read.body.append(body->piece());
    body->release();
  }
  if (!ec && !rp.is_done()) ec = body->end_of_stream();
  return {read.body, rp.is_done(), static_cast<bool>(ec)};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view in = fuzz::as_text(data + 1, size - 1);
  const Read oracle = whole(in);
  const Read got = in_place(fuzz::chunks(in, data[0]), std::size_t{1} << (data[0] % 17));
  if (got.failed && !oracle.failed) {
    // Only the bound on held-back bytes, which Beast's parser alone does not have.
    fuzz::check(in.size() > hub::InPlaceBody::kMaxUnparsedBytes, "an error Beast does not see");
  }
  fuzz::check(oracle.body.starts_with(got.body), "the pieces are not the body");
  if (!got.failed && !oracle.failed) {
    fuzz::check(got.done == oracle.done, "the body ends elsewhere than Beast's");
    if (got.done) fuzz::check(got.body == oracle.body, "the pieces are not the whole body");
  }
  return 0;
}
