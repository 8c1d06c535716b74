// The hub's header handling on relayed messages (hub/http_io.h): which headers a Connection token
// may remove, framing set from the parser's state, and the one bearer-token test.
#include <gtest/gtest.h>

#include "hub/http_io.h"

namespace yurthub::hub {
namespace {

namespace http = boost::beast::http;

TEST(StripHopByHop, ConnectionNeverRemovesFramingHostOrAuthorization) {
  http::fields f;
  f.set(http::field::connection, "Content-Length, transfer-encoding, HOST, Authorization, X-Private");
  f.set(http::field::content_length, "5");
  f.set(http::field::transfer_encoding, "chunked");
  f.set(http::field::host, "hub");
  f.set(http::field::authorization, "Bearer t");
  f.set("X-Private", "gone");
  strip_hop_by_hop(f, false);
  EXPECT_EQ(f[http::field::content_length], "5");
  EXPECT_EQ(f[http::field::transfer_encoding], "chunked");
  EXPECT_EQ(f[http::field::host], "hub");
  EXPECT_EQ(f[http::field::authorization], "Bearer t");
  EXPECT_EQ(f.count("X-Private"), 0u);
  EXPECT_EQ(f.count(http::field::connection), 0u);
}

TEST(SetBodyFraming, TakesTheParsersViewNotTheHeaders) {
  http::fields chunked;
  chunked.set(http::field::content_length, "99");
  set_body_framing(chunked, true, std::nullopt);
  EXPECT_EQ(chunked[http::field::transfer_encoding], "chunked");
  EXPECT_EQ(chunked.count(http::field::content_length), 0u);

  http::fields sized;
  sized.set(http::field::transfer_encoding, "gzip, chunked");
  set_body_framing(sized, false, 12);
  EXPECT_EQ(sized[http::field::content_length], "12");
  EXPECT_EQ(sized.count(http::field::transfer_encoding), 0u);

  http::fields none;
  none.set(http::field::content_length, "3");
  set_body_framing(none, false, std::nullopt);
  EXPECT_EQ(none.count(http::field::content_length), 0u);
  EXPECT_EQ(none.count(http::field::transfer_encoding), 0u);
}

TEST(CarriesBearerToken, SchemeInAnyCaseWithAToken) {
  struct Case {
    const char* authorization;
    bool bearer;
  };
  const Case cases[] = {
      {"Bearer abc", true},  {"bearer abc", true}, {"BEARER abc", true}, {"bEaReR abc", true},
      {"Bearer ", false},    {"Bearer   ", false}, {"Bearerabc", false}, {"Basic YWJj", false},
      {"", false},
  };
  for (const Case& c : cases) {
    http::fields f;
    if (*c.authorization) f.set(http::field::authorization, c.authorization);
    EXPECT_EQ(carries_bearer_token(f), c.bearer) << '"' << c.authorization << '"';
  }
  EXPECT_FALSE(carries_bearer_token(http::fields{}));
}

}  // namespace
}  // namespace yurthub::hub
