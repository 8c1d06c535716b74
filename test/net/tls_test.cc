// TLS contexts (net/tls.h): the HTTPS proxy port refuses renegotiation; per-process secrets.
#include <openssl/ssl.h>

#include <gtest/gtest.h>

#include "net/tls.h"
#include "test/net/self_signed.h"

namespace yurthub::net {
namespace {

TEST(ServerTls, ClientsMayNotRenegotiate) {
  const test_support::SelfSignedCertificate hub("hub");
  auto ctx = make_server_tls(hub.certificate(), hub.key());
  ASSERT_TRUE(ctx) << ctx.error().message;
  EXPECT_NE(SSL_CTX_get_options((*ctx)->native_handle()) & SSL_OP_NO_RENEGOTIATION, 0u);
}

TEST(Secrets, RandomAndComparedWhole) {
  auto a = random_token();
  auto b = random_token();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->size(), 32u);
  EXPECT_NE(*a, *b);
  EXPECT_TRUE(secrets_equal(*a, *a));
  EXPECT_FALSE(secrets_equal(*a, *b));
  EXPECT_FALSE(secrets_equal(*a, a->substr(0, 31)));
  EXPECT_FALSE(secrets_equal("", ""));
}

}  // namespace
}  // namespace yurthub::net
