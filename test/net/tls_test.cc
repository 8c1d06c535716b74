// TLS contexts (net/tls.h): the HTTPS proxy port refuses renegotiation; per-process secrets.
#include <openssl/ssl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "net/tls.h"

namespace yurthub::net {
namespace {

TEST(ServerTls, ClientsMayNotRenegotiate) {
  char pattern[] = "/tmp/yurthub-tls-test-XXXXXX";
  const std::string dir = ::mkdtemp(pattern);
  const std::string cmd =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
      "-keyout " +
      dir + "/k.pem -out " + dir +
      "/c.pem -subj /CN=hub -days 1 "
      ">/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto ctx = make_server_tls(dir + "/c.pem", dir + "/k.pem");
  ASSERT_TRUE(ctx) << ctx.error().message;
  EXPECT_NE(SSL_CTX_get_options((*ctx)->native_handle()) & SSL_OP_NO_RENEGOTIATION, 0u);
  std::filesystem::remove_all(dir);
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
