// Tests for kube/service_account_keys.h: keys published as the apiserver does (an RSA key, an EC
// P-256 key, in a JWKS) and tokens signed here with OpenSSL as the apiserver signs them (RS256;
// ES256 with a raw r||s signature). A token verifies with its key; a changed claim, another
// key's signature, another issuer or audience, an expired token or a token used too early does
// not; documents that are not the apiserver's are errors, never a crash.
#include "kube/service_account_keys.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "base/base64.h"
#include "test/kube/token_signer.h"

namespace yurthub::kube {
namespace {

using namespace yurthub::test_support;

constexpr const char* kIssuer = "https://kubernetes.default.svc.cluster.local";
constexpr std::int64_t kNow = 1800000000;

std::string claims(std::int64_t exp = kNow + 3600, const std::string& iss = kIssuer,
                   const std::string& aud = kIssuer) {
  return R"({"aud":[")" + aud + R"("],"exp":)" + std::to_string(exp) + R"(,"iat":)" +
         std::to_string(kNow - 60) + R"(,"iss":")" + iss +
         R"(","kubernetes.io":{"namespace":"kube-system","pod":{"name":"kube-proxy-x","uid":"p-1"},)"
         R"("serviceaccount":{"name":"kube-proxy","uid":"s-1"}},"nbf":)" +
         std::to_string(kNow - 60) + R"(,"sub":"system:serviceaccount:kube-system:kube-proxy"})";
}

class ServiceAccountKeysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rsa_.reset(EVP_RSA_gen(2048));
    other_.reset(EVP_RSA_gen(2048));
    ec_.reset(EVP_EC_gen("P-256"));
    auto keys = ServiceAccountKeys::parse(
        R"({"issuer":")" + std::string(kIssuer) + R"(","jwks_uri":"x"})",
        R"({"keys":[)" + rsa_jwk(rsa_.get(), "rsa-1") + "," + ec_jwk(ec_.get(), "ec-1") + "]}");
    ASSERT_TRUE(keys) << keys.error().message;
    keys_ = std::make_unique<ServiceAccountKeys>(std::move(*keys));
  }
  std::string verify(const std::string& t, std::int64_t now = kNow,
                     const std::vector<std::string>& audiences = {}) {
    auto out = keys_->verify(t, now, audiences);
    return out ? "ok " + out->service_account : out.error().message;
  }
  Key rsa_, other_, ec_;
  std::unique_ptr<ServiceAccountKeys> keys_;
};

TEST_F(ServiceAccountKeysTest, ATokenSignedByTheIssuersKeyVerifies) {
  EXPECT_EQ(keys_->size(), 2u);
  EXPECT_EQ(keys_->issuer(), kIssuer);
  EXPECT_EQ(verify(token(rsa_.get(), "RS256", "rsa-1", claims())), "ok kube-proxy");
  EXPECT_EQ(verify(token(ec_.get(), "ES256", "ec-1", claims())), "ok kube-proxy");
  EXPECT_EQ(verify(token(rsa_.get(), "RS256", "", claims())), "ok kube-proxy") << "no kid";
}

TEST_F(ServiceAccountKeysTest, AnythingElseIsRefused) {
  const std::string good = token(rsa_.get(), "RS256", "rsa-1", claims());
  // The same signature over another claim (kube-system's admin instead of kube-proxy).
  std::string payload = claims();
  payload.replace(payload.find("\"kube-proxy\",\"uid\":\"s-1\""), 12, "\"admin-sa\"");
  const std::string forged =
      good.substr(0, good.find('.') + 1) + b64(payload) + good.substr(good.rfind('.'));
  EXPECT_EQ(verify(forged), "the token is not signed by any of the issuer's keys");
  EXPECT_EQ(verify(token(other_.get(), "RS256", "rsa-1", claims())),
            "the token is not signed by any of the issuer's keys");
  EXPECT_EQ(verify(token(rsa_.get(), "ES256", "rsa-1", claims())),
            "the token is not signed by any of the issuer's keys")
      << "an algorithm the key does not sign with";
  EXPECT_EQ(verify(token(rsa_.get(), "RS256", "rsa-1", claims(kNow + 3600, "https://other"))),
            "the token was issued by https://other");
  EXPECT_EQ(verify(token(rsa_.get(), "RS256", "rsa-1", claims(kNow + 3600, kIssuer, "vault"))),
            "the token is not meant for this cluster's apiserver");
  EXPECT_EQ(verify(token(rsa_.get(), "RS256", "rsa-1", claims(kNow + 3600, kIssuer, "vault")), kNow,
                   {"vault"}),
            "ok kube-proxy")
      << "an audience the apiserver accepts";
  EXPECT_EQ(verify(good, kNow + 3600 + 60), "the token has expired");
  EXPECT_EQ(verify(good, kNow - 200), "the token is not valid yet");
  for (const char* bad : {"", "a.b", "a.b.c.d", "eyJ9.eyJ9.AAAA", "...."}) {
    EXPECT_NE(verify(bad).substr(0, 2), "ok") << bad;
  }
  EXPECT_FALSE(keys_->verify(std::string(ServiceAccountKeys::kMaxTokenBytes + 1, 'a'), kNow, {}));
}

TEST(ServiceAccountKeys, DocumentsThatAreNotTheApiserversAreErrors) {
  EXPECT_FALSE(ServiceAccountKeys::parse("[]", R"({"keys":[]})"));
  EXPECT_FALSE(ServiceAccountKeys::parse(R"({"issuer":""})", R"({"keys":[]})"));
  EXPECT_FALSE(ServiceAccountKeys::parse(R"({"issuer":"x"})", R"({"keys":{}})"));
  EXPECT_FALSE(ServiceAccountKeys::parse(R"({"issuer":"x"})", R"({"keys":[]})"));
  EXPECT_FALSE(ServiceAccountKeys::parse(
      R"({"issuer":"x"})", R"({"keys":[{"kty":"RSA","n":"!!","e":"AQAB"},{"kty":"oct","k":"x"},)"
                           R"({"kty":"EC","crv":"P-256","x":"AA","y":"AA"}]})"));
}

}  // namespace
}  // namespace yurthub::kube
