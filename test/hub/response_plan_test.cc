// The hub's decisions about a response (hub/response_plan.h): what the cache and the filters read,
// how the body is framed for the client and whether its connection stays open.
#include "hub/response_plan.h"

#include <gtest/gtest.h>

namespace yurthub::hub {
namespace {

ResponseHead json_200() {
  ResponseHead head;
  head.code = 200;
  head.content_type = "application/json";
  head.has_length = true;
  return head;
}

ClientSide http11(bool keep_alive = true) {
  ClientSide client;
  client.version = 11;
  client.keep_alive = keep_alive;
  return client;
}

const RequestPlan kCached = plan_request(false, true, false, false);
const RequestPlan kFiltered = plan_request(false, false, true, false);
const RequestPlan kBoth = plan_request(false, true, true, false);
const RequestPlan kNeither = plan_request(false, false, false, false);

TEST(RequestPlanTest, AsksForJsonOnlyWhenTheCacheOrAFilterReadsTheResponse) {
  EXPECT_TRUE(kCached.ask_json());
  EXPECT_TRUE(kFiltered.ask_json());
  EXPECT_FALSE(kNeither.ask_json());
}

TEST(RequestPlanTest, AHeadRequestIsNeitherCachedNorFiltered) {
  const RequestPlan head = plan_request(true, true, true, true);
  EXPECT_FALSE(head.cache);
  EXPECT_FALSE(head.filter);
  EXPECT_FALSE(head.keyed_body);
  EXPECT_FALSE(head.ask_json());
}

TEST(RequestPlanTest, ABodyIsReadWholeOnlyWhenTheCacheKeysByIt) {
  EXPECT_TRUE(plan_request(false, true, false, true).keyed_body);
  EXPECT_FALSE(plan_request(false, false, false, true).keyed_body);
}

TEST(ResponsePlanTest, APlainJsonSuccessIsTappedAndFiltered) {
  const ResponsePlan plan = plan_response(kBoth, json_200(), http11());
  EXPECT_TRUE(plan.tap);
  EXPECT_TRUE(plan.filter);
  EXPECT_FALSE(plan.decode_gzip);
  EXPECT_EQ(plan.unread_because, nullptr);
  // The filter's output has a new length: dropped, and re-framed chunked.
  EXPECT_TRUE(plan.drop_body_headers);
  EXPECT_EQ(plan.framing, ClientFraming::Chunked);
  EXPECT_TRUE(plan.keep_alive);
}

TEST(ResponsePlanTest, OnlyWhatTheRequestAskedForReadsTheBody) {
  const ResponsePlan cached = plan_response(kCached, json_200(), http11());
  EXPECT_TRUE(cached.tap);
  EXPECT_FALSE(cached.filter);
  EXPECT_EQ(cached.framing, ClientFraming::AsSent);  // the tap does not change the body
  EXPECT_FALSE(cached.drop_body_headers);
  const ResponsePlan filtered = plan_response(kFiltered, json_200(), http11());
  EXPECT_FALSE(filtered.tap);
  EXPECT_TRUE(filtered.filter);
}

TEST(ResponsePlanTest, AStatusErrorPassesAsSentWithoutComplaint) {
  for (unsigned code : {204u, 304u, 404u, 410u, 500u}) {
    ResponseHead head = json_200();
    head.code = code;
    const ResponsePlan plan = plan_response(kBoth, head, http11());
    EXPECT_FALSE(plan.tap) << code;
    EXPECT_FALSE(plan.filter) << code;
    EXPECT_EQ(plan.unread_because, nullptr) << code;
    EXPECT_EQ(plan.framing, ClientFraming::AsSent) << code;
  }
  ResponseHead created = json_200();
  created.code = 201;  // a TokenRequest's answer
  EXPECT_TRUE(plan_response(kCached, created, http11()).tap);
}

TEST(ResponsePlanTest, ABodyThatIsNotPlainJsonIsNotReadAndSaysWhy) {
  // CBOR (a watch is application/cbor-seq): an apiserver with CBORServingAndStorage may answer
  // it to a client that asked; the hub passes it as sent and never caches it as garbage.
  for (const char* type :
       {"application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf;stream=watch",
        "application/json;as=Table;v=v1;g=meta.k8s.io", "application/cbor", "application/cbor-seq",
        "text/plain", ""}) {
    ResponseHead head = json_200();
    head.content_type = type;
    const ResponsePlan plan = plan_response(kBoth, head, http11());
    EXPECT_FALSE(plan.tap) << type;
    EXPECT_FALSE(plan.filter) << type;
    ASSERT_NE(plan.unread_because, nullptr) << type;
    EXPECT_EQ(plan.framing, ClientFraming::AsSent) << type;
  }
  ResponseHead charset = json_200();
  charset.content_type = "application/json; charset=utf-8";
  EXPECT_TRUE(plan_response(kBoth, charset, http11()).filter);
}

TEST(ResponsePlanTest, GzipIsDecodedForTheReadersAndTheFilteredClientGetsItDecoded) {
  ResponseHead head = json_200();
  head.content_encoding = "gzip";
  const ResponsePlan filtered = plan_response(kBoth, head, http11());
  EXPECT_TRUE(filtered.decode_gzip);
  EXPECT_FALSE(filtered.client_encoded);
  EXPECT_TRUE(filtered.drop_body_headers);
  const ResponsePlan cached = plan_response(kCached, head, http11());
  EXPECT_TRUE(cached.decode_gzip);
  EXPECT_TRUE(cached.client_encoded);  // only the tap reads it decoded
  EXPECT_FALSE(cached.drop_body_headers);
  const ResponsePlan neither = plan_response(kNeither, head, http11());
  EXPECT_FALSE(neither.decode_gzip);
  EXPECT_TRUE(neither.client_encoded);
}

TEST(ResponsePlanTest, AnEncodingTheHubCannotDecodeIsRelayedUnreadAndUnfiltered) {
  ResponseHead head = json_200();
  head.content_encoding = "br";
  const ResponsePlan plan = plan_response(kBoth, head, http11());
  EXPECT_FALSE(plan.tap);
  EXPECT_FALSE(plan.filter);
  EXPECT_FALSE(plan.decode_gzip);
  EXPECT_TRUE(plan.client_encoded);
  ASSERT_NE(plan.unread_because, nullptr);
  EXPECT_FALSE(plan.drop_body_headers);
  head.content_encoding = "GZIP";  // content codings are case-insensitive
  EXPECT_TRUE(plan_response(kBoth, head, http11()).decode_gzip);
}

TEST(ResponsePlanTest, TheIdentityCodingIsNoCoding) {
  ResponseHead head = json_200();
  head.content_encoding = "identity";
  const ResponsePlan plan = plan_response(kBoth, head, http11());
  EXPECT_TRUE(plan.tap);
  EXPECT_TRUE(plan.filter);
  EXPECT_FALSE(plan.decode_gzip);
  EXPECT_FALSE(plan_response(kCached, head, http11()).client_encoded);
}

TEST(ResponsePlanTest, AStreamKeepsItsConnectionToItselfAndIsWrittenAsItArrives) {
  ResponseHead head = json_200();
  head.has_length = false;
  head.chunked = true;
  ClientSide client = http11();
  client.long_running = true;
  const ResponsePlan watch = plan_response(kFiltered, head, client);
  EXPECT_TRUE(watch.streaming);
  EXPECT_FALSE(watch.keep_alive);
  head.code = 403;  // a refused watch is an ordinary short response
  const ResponsePlan refused = plan_response(kFiltered, head, client);
  EXPECT_FALSE(refused.streaming);
  EXPECT_TRUE(refused.keep_alive);
}

TEST(ResponsePlanTest, ABodyTheApiserverEndsByClosingIsRechunkedForAnHttp11Client) {
  ResponseHead head = json_200();
  head.has_length = false;
  EXPECT_EQ(plan_response(kNeither, head, http11()).framing, ClientFraming::Chunked);
  head.body_done = true;  // nothing follows the header
  EXPECT_EQ(plan_response(kNeither, head, http11()).framing, ClientFraming::AsSent);
}

TEST(ResponsePlanTest, AnHttp10ClientReadsUntilCloseAndNeverKeepsItsConnection) {
  ClientSide client = http11();
  client.version = 10;
  ResponseHead chunked = json_200();
  chunked.has_length = false;
  chunked.chunked = true;
  const ResponsePlan relayed = plan_response(kNeither, chunked, client);
  EXPECT_EQ(relayed.framing, ClientFraming::UntilClose);
  EXPECT_FALSE(relayed.keep_alive);
  // A filtered body's length is unknown: until close too, never chunked.
  EXPECT_EQ(plan_response(kFiltered, json_200(), client).framing, ClientFraming::UntilClose);
  // A body with its length keeps it.
  EXPECT_EQ(plan_response(kNeither, json_200(), client).framing, ClientFraming::AsSent);
}

TEST(ResponsePlanTest, TheConnectionClosesWhenTheClientOrTheHubSaysSo) {
  EXPECT_FALSE(plan_response(kNeither, json_200(), http11(false)).keep_alive);
  ClientSide draining = http11();
  draining.draining = true;
  EXPECT_FALSE(plan_response(kNeither, json_200(), draining).keep_alive);
}

}  // namespace
}  // namespace yurthub::hub
