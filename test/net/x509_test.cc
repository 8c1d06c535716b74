// Tests for net/x509: keys and requests read back with OpenSSL itself, the CA pin against
// kubeadm's documented openssl pipeline, HMAC against RFC 4231.
#include "net/x509.h"

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace yurthub::net {
namespace {

std::string run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  ::pclose(pipe);
  return out;
}

TEST(CertificateRequest, CarriesTheSubjectAndNamesAndIsSignedByTheKey) {
  auto key = generate_private_key_pem();
  ASSERT_TRUE(key) << key.error().message;
  EXPECT_NE(key->find("-----BEGIN PRIVATE KEY-----"), std::string::npos);
  CertificateRequestSubject subject{"system:node:edge-1",
                                    {"system:nodes", "openyurt:yurthub"},
                                    {"kubernetes.default.svc"},
                                    {"169.254.2.1", "::1"}};
  auto pem = make_certificate_request_pem(*key, subject);
  ASSERT_TRUE(pem) << pem.error().message;
  BIO* bio = BIO_new_mem_buf(pem->data(), static_cast<int>(pem->size()));
  X509_REQ* req = PEM_read_bio_X509_REQ(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  ASSERT_NE(req, nullptr);
  EVP_PKEY* pub = X509_REQ_get0_pubkey(req);
  EXPECT_EQ(X509_REQ_verify(req, pub), 1);
  char line[256];
  X509_NAME_oneline(X509_REQ_get_subject_name(req), line, sizeof line);
  EXPECT_STREQ(line, "/O=system:nodes/O=openyurt:yurthub/CN=system:node:edge-1");
  STACK_OF(X509_EXTENSION)* exts = X509_REQ_get_extensions(req);
  ASSERT_NE(exts, nullptr);
  auto* names =
      static_cast<GENERAL_NAMES*>(X509V3_get_d2i(exts, NID_subject_alt_name, nullptr, nullptr));
  ASSERT_NE(names, nullptr);
  EXPECT_EQ(sk_GENERAL_NAME_num(names), 3);
  GENERAL_NAMES_free(names);
  sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
  X509_REQ_free(req);
}

TEST(CertificateRequest, RefusesAnAddressThatIsNotOne) {
  auto key = generate_private_key_pem();
  ASSERT_TRUE(key);
  CertificateRequestSubject subject{"x", {}, {}, {"not-an-ip"}};
  auto pem = make_certificate_request_pem(*key, subject);
  ASSERT_FALSE(pem);
  EXPECT_EQ(pem.error().code, ErrorCode::InvalidArgument);
}

class SelfSigned : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("x509_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    const std::string d = dir_.string();
    run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + d +
        "/k.pem -out " + d +
        "/c.pem -days 2 -subj '/O=g1/O=g2/CN=system:node:n' "
        "-addext 'subjectAltName=DNS:kubernetes,IP:10.0.0.1,IP:::1' 2>/dev/null");
    cert_ = read(dir_ / "c.pem");
    key_ = read(dir_ / "k.pem");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static std::string read(const std::filesystem::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::filesystem::path dir_;
  std::string cert_, key_;
};

TEST_F(SelfSigned, InspectionReadsSubjectAndValidity) {
  ASSERT_FALSE(cert_.empty());
  auto info = inspect_certificate(cert_);
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->common_name, "system:node:n");
  EXPECT_EQ(info->organizations, (std::vector<std::string>{"g1", "g2"}));
  EXPECT_EQ(info->dns_names, (std::vector<std::string>{"kubernetes"}));
  EXPECT_EQ(info->ip_addresses, (std::vector<std::string>{"10.0.0.1", "::1"}));
  const auto lifetime = info->not_after - info->not_before;
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::hours>(lifetime).count(), 48);
  EXPECT_TRUE(key_matches_certificate(key_, cert_));
  auto other = generate_private_key_pem();
  ASSERT_TRUE(other);
  EXPECT_FALSE(key_matches_certificate(*other, cert_));
  EXPECT_FALSE(inspect_certificate("not a certificate"));
}

TEST_F(SelfSigned, PinIsKubeadmsHashOfThePublicKey) {
  const std::string d = dir_.string();
  // kubeadm's documented way to compute --discovery-token-ca-cert-hash.
  std::string expected = run("openssl x509 -pubkey -in " + d +
                             "/c.pem | openssl pkey -pubin -outform der 2>/dev/null | "
                             "openssl dgst -sha256 -hex | sed 's/^.* //'");
  while (!expected.empty() && (expected.back() == '\n' || expected.back() == ' ')) {
    expected.pop_back();
  }
  ASSERT_EQ(expected.size(), 64u);
  auto pin = public_key_pin(cert_);
  ASSERT_TRUE(pin);
  EXPECT_EQ(*pin, "sha256:" + expected);
}

TEST(Hmac, MatchesRfc4231TestCase2) {
  const std::string mac = hmac_sha256("Jefe", "what do ya want for nothing?");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : mac) {
    hex += kHex[c >> 4];
    hex += kHex[c & 15];
  }
  EXPECT_EQ(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

}  // namespace
}  // namespace yurthub::net
