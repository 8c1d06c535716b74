// Which response bodies the hub reads as JSON (kube/media_type.h).
#include "kube/media_type.h"

#include <gtest/gtest.h>

namespace yurthub::kube {
namespace {

TEST(MediaTypeTest, PlainJsonWithOrWithoutParameters) {
  EXPECT_TRUE(is_plain_json("application/json"));
  EXPECT_TRUE(is_plain_json("application/json;charset=utf-8"));
  EXPECT_TRUE(is_plain_json("application/json; charset=utf-8"));
  EXPECT_TRUE(is_plain_json("application/jwk-set+json"));  // the issuer's keys
}

TEST(MediaTypeTest, ConversionsAndOtherTypesAreNot) {
  EXPECT_FALSE(is_plain_json("application/json;as=Table;v=v1;g=meta.k8s.io"));
  EXPECT_FALSE(
      is_plain_json("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"));
  EXPECT_FALSE(is_plain_json("application/vnd.kubernetes.protobuf"));
  EXPECT_FALSE(is_plain_json("application/json-patch+json"));
  EXPECT_FALSE(is_plain_json("text/plain"));
  EXPECT_FALSE(is_plain_json(""));
}

TEST(MediaTypeTest, OnlyOneParameterlessJsonTypeIsAskedForUnchanged) {
  EXPECT_TRUE(is_plain_json_accept("application/json"));
  EXPECT_TRUE(is_plain_json_accept("application/jwk-set+json"));
  EXPECT_FALSE(is_plain_json_accept(""));
  EXPECT_FALSE(is_plain_json_accept("*/*"));
  EXPECT_FALSE(is_plain_json_accept("application/json;as=Table;v=v1;g=meta.k8s.io"));
  EXPECT_FALSE(is_plain_json_accept("application/vnd.kubernetes.protobuf, application/json"));
  EXPECT_FALSE(is_plain_json_accept("x/json, application/json"));
  EXPECT_FALSE(is_plain_json_accept("application/yaml"));
}

}  // namespace
}  // namespace yurthub::kube

namespace yurthub::kube {
namespace {

TEST(MediaTypeTest, WhoTakesTheHubsJsonAnswer) {
  for (const char* yes :
       {"", "*/*", "application/json", "application/json;as=Table;v=v1;g=meta.k8s.io",
        "application/vnd.kubernetes.protobuf,application/json",
        "application/vnd.kubernetes.protobuf", "application/jwk-set+json",
        "application/cbor;q=1, application/json;q=0.9", "text/plain, */*"}) {
    EXPECT_TRUE(accepts_json_answer(yes)) << yes;
  }
  for (const char* no :
       {"application/cbor", "application/yaml", "application/cbor-seq", "text/plain"}) {
    EXPECT_FALSE(accepts_json_answer(no)) << no;
  }
}

}  // namespace
}  // namespace yurthub::kube
