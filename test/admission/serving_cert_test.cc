// admission/serving_cert: the webhook's certificate follows its files (a renewed Secret) once the
// check interval has passed on base::Clock, and a half-written pair keeps the last good one.
#include "admission/serving_cert.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace yurthub::admission {
namespace {

class ServingCertTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pool-admission-cert-test-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    for (const char* name : {"one", "two", "three"}) {
      const std::string cmd =
          "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " +
          dir_ + "/" + name + ".key -out " + dir_ + "/" + name + ".crt -subj /CN=" + name +
          " -days 1 >/dev/null 2>&1";
      ASSERT_EQ(std::system(cmd.c_str()), 0);
    }
    use("one", "one");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Puts `cert`'s certificate and `key`'s key where the flags point.
  void use(const std::string& cert, const std::string& key) {
    const auto overwrite = std::filesystem::copy_options::overwrite_existing;
    std::filesystem::copy_file(dir_ + "/" + cert + ".crt", dir_ + "/tls.crt", overwrite);
    std::filesystem::copy_file(dir_ + "/" + key + ".key", dir_ + "/tls.key", overwrite);
  }

  // The CN the context presents.
  static std::string served(const std::shared_ptr<boost::asio::ssl::context>& context) {
    X509* cert = SSL_CTX_get0_certificate(context->native_handle());
    char cn[64] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
    return cn;
  }

  std::string dir_;
};

TEST_F(ServingCertTest, FollowsTheFilesAfterTheCheckInterval) {
  base::TestClock clock;
  auto cert =
      ServingCertificate::load(dir_ + "/tls.crt", dir_ + "/tls.key", std::chrono::seconds(10));
  ASSERT_TRUE(cert) << cert.error().message;
  EXPECT_EQ(served((*cert)->current()), "one");

  use("two", "two");
  clock.advance(std::chrono::seconds(9));
  EXPECT_EQ(served((*cert)->current()), "one");  // not looked at yet
  clock.advance(std::chrono::seconds(1));
  EXPECT_EQ(served((*cert)->current()), "two");

  // The certificate renewed before its key: the pair does not load, the last good one stays.
  use("three", "two");
  clock.advance(std::chrono::seconds(10));
  EXPECT_EQ(served((*cert)->current()), "two");
  use("three", "three");
  clock.advance(std::chrono::seconds(10));
  EXPECT_EQ(served((*cert)->current()), "three");

  // Unchanged files keep the very same context.
  auto before = (*cert)->current();
  clock.advance(std::chrono::seconds(10));
  EXPECT_EQ((*cert)->current(), before);
}

TEST_F(ServingCertTest, AMissingOrMismatchedPairIsAStartupError) {
  auto missing = ServingCertificate::load(dir_ + "/none.crt", dir_ + "/tls.key");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("--tls-cert-file"), std::string::npos);
  use("one", "two");
  EXPECT_FALSE(ServingCertificate::load(dir_ + "/tls.crt", dir_ + "/tls.key"));
}

}  // namespace
}  // namespace yurthub::admission
