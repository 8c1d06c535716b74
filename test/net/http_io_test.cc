// The hub's header handling on relayed messages (net/http_io.h): which headers a Connection token
// may remove, framing set from the parser's state, and the one bearer-token test.
#include <gtest/gtest.h>

#include "net/http_io.h"

namespace yurthub::net {
namespace {

namespace http = boost::beast::http;

TEST(StripHopByHop, ConnectionNeverRemovesFramingHostOrAuthorization) {
  http::fields f;
  f.set(http::field::connection,
        "Content-Length, transfer-encoding, HOST, Authorization, X-Private");
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
      {"Bearer abc", true}, {"bearer abc", true},  {"BEARER abc", true},
      {"bEaReR abc", true}, {"Bearer ", false},    {"Bearer   ", false},
      {"Bearerabc", false}, {"Basic YWJj", false}, {"", false},
  };
  for (const Case& c : cases) {
    http::fields f;
    if (*c.authorization) f.set(http::field::authorization, c.authorization);
    EXPECT_EQ(carries_bearer_token(f), c.bearer) << '"' << c.authorization << '"';
  }
  EXPECT_FALSE(carries_bearer_token(http::fields{}));
}

TEST(HopByHop, StrippedUnlessUpgrading) {
  http::fields f;
  f.set(http::field::connection, "keep-alive, X-Private");
  f.set("X-Private", "secret");
  f.set(http::field::keep_alive, "timeout=5");
  f.set(http::field::te, "trailers");
  f.set(http::field::proxy_authorization, "Basic x");
  f.set(http::field::authorization, "Bearer t");
  f.set(http::field::upgrade, "websocket");
  f.set(http::field::transfer_encoding, "chunked");
  f.insert("X-Private", "second");  // every field of a name the Connection header lists goes
  http::fields upgrade = f;
  upgrade.set(http::field::connection, "Upgrade");

  EXPECT_FALSE(is_upgrade_request(f));
  strip_hop_by_hop(f, false);
  for (auto name :
       {"Connection", "X-Private", "Keep-Alive", "TE", "Proxy-Authorization", "Upgrade"}) {
    EXPECT_EQ(f.count(name), 0u) << name;
  }
  EXPECT_EQ(f[http::field::authorization], "Bearer t");
  // The relay frames the body by this header, so it stays.
  EXPECT_EQ(f[http::field::transfer_encoding], "chunked");

  EXPECT_TRUE(is_upgrade_request(upgrade));
  strip_hop_by_hop(upgrade, true);
  EXPECT_EQ(upgrade[http::field::connection], "Upgrade");
  EXPECT_EQ(upgrade[http::field::upgrade], "websocket");
  EXPECT_EQ(upgrade.count(http::field::keep_alive), 0u);
}

// Found with test/fuzz/http_request_fuzz.cc's oracle: `Connection: Content-Length` used to strip
// the request's Content-Length, and the forwarder then sent the body unframed, so the apiserver
// read it as a second request on the hub's connection (request smuggling).
TEST(StripHopByHop, ConnectionCannotStripTheBodyFraming) {
  http::fields length;
  length.set(http::field::content_length, "51");
  length.set(http::field::connection, "Content-Length, X-Private");
  length.set("X-Private", "x");
  strip_hop_by_hop(length, false);
  EXPECT_EQ(length[http::field::content_length], "51");
  EXPECT_EQ(length.count("X-Private"), 0u);
  EXPECT_EQ(length.count(http::field::connection), 0u);

  http::fields chunked;
  chunked.set(http::field::transfer_encoding, "chunked");
  chunked.set(http::field::connection, "transfer-encoding");
  strip_hop_by_hop(chunked, false);
  EXPECT_EQ(chunked[http::field::transfer_encoding], "chunked");
}

// The relayed response's one pass: hop-by-hop headers go and the framing is the parser's, as
// strip_hop_by_hop followed by set_body_framing would leave it.
TEST(StripHopByHop, WithFramingSetsTheParsersFramingInTheSamePass) {
  http::fields sized;
  sized.set(http::field::content_length, "12");
  sized.insert(http::field::content_length, "12");  // a repeat goes
  sized.set(http::field::transfer_encoding, "chunked");
  sized.set(http::field::keep_alive, "timeout=5");
  sized.set(http::field::content_type, "application/json");
  strip_hop_by_hop(sized, false, BodyFraming{false, 12});
  EXPECT_EQ(sized.count(http::field::content_length), 1u);
  EXPECT_EQ(sized[http::field::content_length], "12");
  EXPECT_EQ(sized.count(http::field::transfer_encoding), 0u);
  EXPECT_EQ(sized.count(http::field::keep_alive), 0u);
  EXPECT_EQ(sized.begin()->name(), http::field::content_length);  // kept where it was

  http::fields wrong_length;
  wrong_length.set(http::field::content_length, "012");
  wrong_length.set(http::field::connection, "content-length");
  strip_hop_by_hop(wrong_length, false, BodyFraming{false, 12});
  EXPECT_EQ(wrong_length.count(http::field::content_length), 1u);
  EXPECT_EQ(wrong_length[http::field::content_length], "12");
  EXPECT_EQ(wrong_length.count(http::field::connection), 0u);

  http::fields chunked;
  chunked.set(http::field::content_length, "99");
  chunked.set(http::field::transfer_encoding, "gzip, chunked");
  strip_hop_by_hop(chunked, false, BodyFraming{true, 99});  // the length is not read
  EXPECT_EQ(chunked.count(http::field::content_length), 0u);
  EXPECT_EQ(chunked.count(http::field::transfer_encoding), 1u);
  EXPECT_EQ(chunked[http::field::transfer_encoding], "chunked");

  http::fields bodiless;
  bodiless.set(http::field::content_length, "5");
  bodiless.set(http::field::transfer_encoding, "chunked");
  strip_hop_by_hop(bodiless, false, BodyFraming{});
  EXPECT_EQ(bodiless.count(http::field::content_length), 0u);
  EXPECT_EQ(bodiless.count(http::field::transfer_encoding), 0u);
}

}  // namespace
}  // namespace yurthub::net
