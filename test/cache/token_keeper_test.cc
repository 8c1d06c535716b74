// Kept service-account tokens (cache/token_keeper.h): the key of a request read alike from JSON
// and protobuf, a kept answer served while its token is valid (by the JWT's own expiry, which the
// apiserver extends to a year for kubelet), never to another component, and a placeholder
// otherwise.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "base/base64.h"
#include "cache/token_keeper.h"
#include "test/cache/cache_test_support.h"

namespace yurthub::cache {
namespace {

using namespace yurthub::cache::test_support;

constexpr std::int64_t kNow = 1795428000;  // 2026-11-23T10:00:00Z

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(YURTHUB_TESTDATA_DIR) + "/protobuf/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

kube::RequestInfo token_request(const char* agent = "kubelet/v1.26.1") {
  return kube::classify_request("POST", "/api/v1/namespaces/default/serviceaccounts/default/token",
                                agent);
}

std::string base64url(const std::string& text) { return base::encode_base64url(text); }

// The apiserver's answer to kubelet: status says 3607 s, the JWT itself says a year.
std::string answer(std::int64_t jwt_exp, const std::string& status_exp) {
  const std::string jwt = base64url(R"({"alg":"RS256"})") + "." +
                          base64url(R"({"exp":)" + std::to_string(jwt_exp) + "}") + ".sig";
  return R"({"kind":"TokenRequest","apiVersion":"authentication.k8s.io/v1","status":{"token":")" +
         jwt + R"(","expirationTimestamp":")" + status_exp + R"("}})";
}

const char* kJsonBody =
    R"({"spec":{"audiences":["https://kubernetes.default.svc.cluster.local"],"expirationSeconds":3607,)"
    R"("boundObjectRef":{"kind":"Pod","apiVersion":"v1","name":"web-0","uid":"0b9e5c1e-2f3a-4b5c-8d7e-6f5a4b3c2d1e"}}})";

class TokenKeeperTest : public StoreFixture {
 protected:
  void SetUp() override {
    StoreFixture::SetUp();
    keeper_ = std::make_unique<TokenKeeper>(*store_, *writer_, registry_, [this] { return now_; });
  }
  void TearDown() override {
    writer_->wait_tasks();
    keeper_.reset();
    StoreFixture::TearDown();
  }
  void keep(const TokenRequestKey& key, const std::string& body) {
    auto tap = keeper_->tap(key);
    tap->body(body);
    tap->end(true);
    writer_->wait_tasks();
  }
  std::int64_t now_ = kNow;
  std::unique_ptr<TokenKeeper> keeper_;
};

TEST_F(TokenKeeperTest, JsonAndProtobufRequestsHaveOneKey) {
  auto from_json = read_token_request(token_request(), "application/json", kJsonBody);
  auto from_protobuf = read_token_request(token_request(), "application/vnd.kubernetes.protobuf",
                                          fixture("token-request.pb"));
  ASSERT_TRUE(from_json);
  ASSERT_TRUE(from_protobuf);
  EXPECT_EQ(from_json->digest(), from_protobuf->digest());
  EXPECT_EQ(from_json->bound_name, "web-0");
  auto other = read_token_request(token_request(), "application/vnd.kubernetes.protobuf",
                                  fixture("token-request-other-audience.pb"));
  ASSERT_TRUE(other);
  EXPECT_NE(other->digest(), from_json->digest());
  EXPECT_FALSE(read_token_request(token_request(), "application/json", "{not json"));
  EXPECT_FALSE(read_token_request(token_request(), "text/plain", kJsonBody));
}

TEST_F(TokenKeeperTest, AKeptTokenIsServedUntilItsJwtExpires) {
  auto key = read_token_request(token_request(), "application/json", kJsonBody);
  ASSERT_TRUE(key);
  const std::string kept = answer(kNow + 365 * 24 * 3600, "2026-11-23T11:00:07Z");
  keep(*key, kept);
  now_ = kNow + 48 * 3600;  // two days offline: past the status' hour, within the token's year
  auto served = keeper_->answer(*key);
  EXPECT_TRUE(served.kept);
  EXPECT_EQ(served.json, kept);
  // Never to another component, even with the same body.
  auto other = read_token_request(token_request("coredns/1.11"), "application/json", kJsonBody);
  EXPECT_FALSE(keeper_->answer(*other).kept);
  now_ = kNow + 365 * 24 * 3600;  // expired (within the 30 s margin)
  EXPECT_FALSE(keeper_->answer(*key).kept);
}

TEST_F(TokenKeeperTest, WithoutAJwtExpiryTheStatusDecides) {
  auto key = read_token_request(token_request(), "application/json", kJsonBody);
  keep(*key, R"({"status":{"token":"opaque","expirationTimestamp":"2026-11-23T11:00:00Z"}})");
  EXPECT_TRUE(keeper_->answer(*key).kept);
  now_ = kNow + 3600;
  EXPECT_FALSE(keeper_->answer(*key).kept);
}

TEST_F(TokenKeeperTest, APlaceholderIsAShortLivedTokenNoApiserverAccepts) {
  auto key = read_token_request(token_request(), "application/json", kJsonBody);
  auto placeholder = keeper_->answer(*key);
  EXPECT_FALSE(placeholder.kept);
  rapidjson::Document doc;
  doc.Parse(placeholder.json.c_str());
  ASSERT_TRUE(doc.IsObject()) << placeholder.json;
  EXPECT_STREQ(doc["kind"].GetString(), "TokenRequest");
  EXPECT_STREQ(doc["status"]["expirationTimestamp"].GetString(), "2026-11-23T10:01:00Z");
  EXPECT_STREQ(doc["spec"]["boundObjectRef"]["name"].GetString(), "web-0");
  const std::string token = doc["status"]["token"].GetString();
  ASSERT_EQ(std::count(token.begin(), token.end(), '.'), 2);
  // The claims say what it is.
  std::string claims = token.substr(token.find('.') + 1);
  claims = claims.substr(0, claims.find('.'));
  auto decoded = base::decode_base64url(claims);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  const std::string& json = *decoded;
  EXPECT_NE(json.find(R"("iss":"yurthub-offline-placeholder")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("sub":"system:serviceaccount:default:default")"), std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("exp":1795428060)"), std::string::npos) << json;
  EXPECT_NE(
      registry_.render().find(R"(node_yurthub_offline_token_requests_total{answer="fake"} 1)"),
      std::string::npos);
}

TEST_F(TokenKeeperTest, KeptTokensAreNeverListedWithTheCache) {
  auto key = read_token_request(token_request(), "application/json", kJsonBody);
  keep(*key, answer(kNow + 3600, "2026-11-23T11:00:00Z"));
  EXPECT_TRUE(store_->read()->lists_with_prefix("").empty());
  EXPECT_EQ(store_->stats().objects, 0u);
}

}  // namespace
}  // namespace yurthub::cache
