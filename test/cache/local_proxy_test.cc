// Offline continue tokens (cache/local_proxy.h): what the cache hands out for paged lists while
// offline, and that the apiserver's own tokens are not mistaken for them.
#include "cache/local_proxy.h"

#include <gtest/gtest.h>

namespace yurthub::cache {
namespace {

TEST(ContinueToken, RoundTripsAndRejectsForeignTokens) {
  ContinuePoint p{42, "kube-system", "coredns-abc"};
  const std::string token = encode_continue(p);
  EXPECT_EQ(token.rfind("yh1.", 0), 0u);
  EXPECT_EQ(token.find_first_of("+/="), std::string::npos);  // base64url, unpadded
  auto back = decode_continue(token);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->set, 42u);
  EXPECT_EQ(back->namespace_name, "kube-system");
  EXPECT_EQ(back->name, "coredns-abc");
  // The apiserver's own tokens (from the fixture) cannot be resumed offline.
  EXPECT_FALSE(
      decode_continue("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjI5LCJzdGFydCI6IndlYi0wXHUwMDAwIn0")
          .has_value());
  EXPECT_FALSE(decode_continue("yh1.!!!").has_value());
}

}  // namespace
}  // namespace yurthub::cache
