// shape_client_head (hub/response_relay.h): the head the client gets for an apiserver's response,
// read by the hub's own parser (hub/exchange.h limit_response_parser) and planned by
// plan_response. Its framing headers must say how the relay writes the body.
#include "hub/response_relay.h"

#include <gtest/gtest.h>

#include <boost/asio/buffer.hpp>

#include "net/http_framing.h"

namespace yurthub::hub {
namespace {

struct Case {
  const char* name;
  std::string_view upstream;  // the apiserver's head
  RequestPlan request;
  ClientSide client;
  bool head_request;
  // The framing lines of the head the client gets, in order ("" for none).
  std::string framing;
  bool writes_chunked;  // what the relay's BodyFramer is given
};

// The Transfer-Encoding and Content-Length lines of `head`.
std::string framing_lines(const std::string& head) {
  std::string out;
  for (std::size_t at = 0; at < head.size();) {
    const std::size_t end = head.find("\r\n", at);
    const std::string line = head.substr(at, end - at);
    if (line.starts_with("Transfer-Encoding:") || line.starts_with("Content-Length:")) {
      out += line + "\n";
    }
    at = end + 2;
  }
  return out;
}

TEST(ShapeClientHead, TheFramingLinesSayHowTheBodyIsWritten) {
  const RequestPlan neither = plan_request(false, false, false, false);
  const RequestPlan filtered = plan_request(false, false, true, false);
  const ClientSide http11{11, true, false, false};
  const ClientSide http10{10, false, false, false};
  const Case cases[] = {
      {"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", neither, http11, false,
       "Transfer-Encoding: chunked\n", true},
      {"a length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", neither, http11, false,
       "Content-Length: 5\n", false},
      // Beast's parser reads all Transfer-Encoding lines (chunked), its message only the first
      // (gzip): the head went out as it came and the body unchunked.
      {"two Transfer-Encoding lines",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n", neither,
       http11, false, "Transfer-Encoding: chunked\n", true},
      {"a list of one length", "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n", neither, http11,
       false, "Content-Length: 5\n", false},
      {"filtered: the filter's output is chunked",
       "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n", filtered,
       http11, false, "Transfer-Encoding: chunked\n", true},
      {"an HTTP/1.0 client reads until the close",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", neither, http10, false, "", false},
      {"HEAD keeps the length of what GET would send",
       "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n", plan_request(true, true, true, false),
       http11, true, "Content-Length: 1234\n", false},
  };
  for (const Case& c : cases) {
    net::HeaderArena arena;
    ResponseParser rp(std::piecewise_construct, std::tuple<>{}, std::tuple{arena.fresh()});
    limit_response_parser(rp, c.head_request);
    boost::system::error_code ec;
    rp.put(boost::asio::buffer(c.upstream.data(), c.upstream.size()), ec);
    ASSERT_FALSE(ec) << c.name << ": " << ec.message();
    const ResponsePlan plan =
        plan_response(c.request, response_head_facts(rp, c.request.ask_json()), c.client);
    shape_client_head(rp, plan, c.client.version);
    EXPECT_EQ(framing_lines(net::message_head(rp.get())), c.framing) << c.name;
    EXPECT_EQ(rp.get().chunked(), c.writes_chunked) << c.name;
  }
}

}  // namespace
}  // namespace yurthub::hub
