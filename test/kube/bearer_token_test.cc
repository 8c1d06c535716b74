// Bearer tokens as kube-apiserver's authenticator splits them, and the claims of service-account
// JWTs (bound, legacy, and not JWTs at all), from tokens built here as the apiserver encodes them.
#include "kube/bearer_token.h"

#include <gtest/gtest.h>

#include "base/base64.h"

namespace yurthub::kube {
namespace {

std::string jwt(const std::string& payload) {
  return base::encode_base64url(R"({"alg":"RS256","kid":"k"})") + "." +
         base::encode_base64url(payload) + ".c2lnbmF0dXJl";
}

TEST(BearerToken, SplitAsTheApiserverDoes) {
  struct Case {
    const char* header;
    std::optional<std::string_view> token;
  };
  for (const Case& c :
       {Case{"Bearer abc", "abc"}, Case{"bearer abc", "abc"}, Case{"BEARER abc", "abc"},
        Case{"  Bearer abc  ", "abc"}, Case{"Bearer abc def", "abc"}, Case{"Bearer  abc", ""},
        Case{"Bearer", std::nullopt}, Case{"Basic abc", std::nullopt},
        Case{"Bearerabc", std::nullopt}, Case{"", std::nullopt}}) {
    EXPECT_EQ(bearer_token(c.header), c.token) << c.header;
  }
}

TEST(BearerToken, ClaimsOfABoundServiceAccountToken) {
  auto claims = read_jwt_claims(
      jwt(R"({"aud":["https://kubernetes.default.svc.cluster.local"],"exp":1827000000,)"
          R"("iat":1795464000,"iss":"https://kubernetes.default.svc.cluster.local",)"
          R"("kubernetes.io":{"namespace":"kube-system","pod":{"name":"kube-proxy-x","uid":"p-1"},)"
          R"("serviceaccount":{"name":"kube-proxy","uid":"s-1"}},)"
          R"("sub":"system:serviceaccount:kube-system:kube-proxy"})"));
  ASSERT_TRUE(claims);
  EXPECT_EQ(claims->expires, 1827000000);
  EXPECT_EQ(claims->issuer, "https://kubernetes.default.svc.cluster.local");
  EXPECT_EQ(claims->subject, "system:serviceaccount:kube-system:kube-proxy");
  EXPECT_EQ(claims->namespace_name, "kube-system");
  EXPECT_EQ(claims->service_account, "kube-proxy");
  EXPECT_EQ(claims->service_account_uid, "s-1");
  EXPECT_EQ(claims->pod_name, "kube-proxy-x");
  EXPECT_EQ(claims->pod_uid, "p-1");
}

TEST(BearerToken, ClaimsOfALegacySecretToken) {
  auto claims = read_jwt_claims(
      jwt(R"({"iss":"kubernetes/serviceaccount","kubernetes.io/serviceaccount/namespace":"ops",)"
          R"("kubernetes.io/serviceaccount/service-account.name":"backup",)"
          R"("sub":"system:serviceaccount:ops:backup"})"));
  ASSERT_TRUE(claims);
  EXPECT_FALSE(claims->expires);  // never expires
  EXPECT_EQ(claims->namespace_name, "ops");
  EXPECT_EQ(claims->service_account, "backup");
  EXPECT_EQ(claims->pod_uid, "");
}

TEST(BearerToken, WhatIsNotAJwtHasNoClaims) {
  EXPECT_FALSE(read_jwt_claims("abcdef.0123456789abcdef"));  // a bootstrap token
  EXPECT_FALSE(read_jwt_claims("opaque"));
  EXPECT_FALSE(read_jwt_claims("a.b.c.d"));
  EXPECT_FALSE(read_jwt_claims("x." + base::encode_base64url("[1,2]") + ".y"));
  EXPECT_FALSE(read_jwt_claims("x.!!!.y"));
  auto odd = read_jwt_claims(jwt(R"({"exp":"soon","kubernetes.io":"x"})"));
  ASSERT_TRUE(odd);  // a JSON payload, but claims of the wrong types are absent
  EXPECT_FALSE(odd->expires);
  EXPECT_EQ(odd->namespace_name, "");
}

}  // namespace
}  // namespace yurthub::kube
