// Tests for hub/certificate's pure parts: the cluster-info signature check (against a value made
// independently with Python's hmac), the renewal time's window, and the credential files
// (atomic writes, the current symlink, old pairs removed).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "hub/certificate/certificate_files.h"
#include "hub/certificate/client_certificate_manager.h"
#include "hub/certificate/cluster_discovery.h"
#include "hub/certificate/renewal.h"
#include "kube/kubeconfig.h"
#include "net/files.h"

namespace yurthub::hub {
namespace {

// python3: header = b64url('{"alg":"HS256","kid":"abcdef"}'); content as below;
// sig = hmac.new(b'0123456789abcdef', (header + '.' + b64url(content)).encode(), sha256)
constexpr const char* kContent = "apiVersion: v1\nclusters: []\n";
constexpr const char* kSignature =
    "eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9..BBvDJAkf27s1H4CVEm8EIMiBR80uZHSN_IM4Siy8zsU";

TEST(ClusterInfoSignature, AcceptsTheTokensSignatureOnly) {
  EXPECT_TRUE(cluster_info_signed_by(kSignature, kContent, "abcdef.0123456789abcdef"));
  EXPECT_FALSE(cluster_info_signed_by(kSignature, kContent, "abcdef.0123456789abcdee"));
  EXPECT_FALSE(cluster_info_signed_by(kSignature, "apiVersion: v1\nclusters: [x]\n",
                                      "abcdef.0123456789abcdef"));
  EXPECT_FALSE(cluster_info_signed_by(kSignature, kContent, "not-a-token"));
}

TEST(RenewalTime, FallsBetweenSeventyAndNinetyPercent) {
  const std::chrono::system_clock::time_point start{std::chrono::hours(1000)};
  const auto end = start + std::chrono::hours(100);
  for (int i = 0; i < 200; ++i) {
    const auto when = renewal_time(start, end);
    EXPECT_GE(when, start + std::chrono::hours(70));
    EXPECT_LE(when, start + std::chrono::hours(90));
  }
}

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("certificate_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  static std::string read(const std::filesystem::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::filesystem::path root_;
};

TEST_F(Files, CurrentPointsAtTheNewestPairAndOnlyTwoAreKept) {
  CertificateFiles files(root_);
  const std::filesystem::path pki = root_ / "pki";
  std::filesystem::create_directories(pki);
  std::ofstream(pki / "yurthub-2000-01-01-00-00-00.pem") << "oldest";
  std::ofstream(pki / "yurthub-server-current.pem") << "not ours";
  ASSERT_TRUE(files.save_pair("CERT1", "KEY1"));
  EXPECT_EQ(read(files.current_pem()), "CERT1KEY1");
  EXPECT_EQ(std::filesystem::status(files.current_pem()).permissions() &
                std::filesystem::perms::others_read,
            std::filesystem::perms::none);
  const auto first = std::filesystem::read_symlink(files.current_pem());
  std::filesystem::rename(pki / first, pki / "yurthub-2001-01-01-00-00-00.pem");
  std::filesystem::create_symlink("yurthub-2001-01-01-00-00-00.pem", pki / "link");
  std::filesystem::rename(pki / "link", files.current_pem());
  ASSERT_TRUE(files.save_pair("CERT2", "KEY2"));
  EXPECT_EQ(read(files.current_pem()), "CERT2KEY2");
  EXPECT_TRUE(std::filesystem::exists(pki / "yurthub-2001-01-01-00-00-00.pem"));  // the previous
  EXPECT_FALSE(std::filesystem::exists(pki / "yurthub-2000-01-01-00-00-00.pem"));
  EXPECT_TRUE(std::filesystem::exists(pki / "yurthub-server-current.pem"));
  EXPECT_FALSE(std::filesystem::exists(pki / "yurthub-current.pem.tmp"));
}

TEST_F(Files, KubeconfigLoadsBackWithTheCurrentPair) {
  CertificateFiles files(root_);
  ASSERT_TRUE(files.save_bootstrap_kubeconfig("https://10.0.0.1:6443", "abcdef.0123456789abcdef"));
  std::filesystem::create_directories(root_ / "pki");
  std::ofstream(files.ca_file())
      << "-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n";
  auto bootstrap = net::load_kubeconfig(files.bootstrap_kubeconfig().string());
  ASSERT_TRUE(bootstrap) << bootstrap.error().message;
  EXPECT_EQ(bootstrap->server, "https://10.0.0.1:6443");
  EXPECT_EQ(bootstrap->token, "abcdef.0123456789abcdef");
  ASSERT_TRUE(files.save_pair("-----BEGIN CERTIFICATE-----\nMQ==\n-----END CERTIFICATE-----\n",
                              "-----BEGIN PRIVATE KEY-----\nMg==\n-----END PRIVATE KEY-----\n"));
  ASSERT_TRUE(files.save_kubeconfig("https://10.0.0.1:6443"));
  auto own = net::load_kubeconfig(files.kubeconfig().string());
  ASSERT_TRUE(own) << own.error().message;
  EXPECT_NE(own->client_cert_pem.find("MQ=="), std::string::npos);
  EXPECT_NE(own->client_key_pem.find("Mg=="), std::string::npos);
}

TEST_F(Files, ForgetRemovesOnlyTheHubsOwnFilesAndKeepsTheBootstrapFile) {
  CertificateFiles files(root_);
  ASSERT_TRUE(files.save_pair("C", "K"));
  ASSERT_TRUE(files.save_pair("S", "K", Pair::Serving));
  ASSERT_TRUE(files.save_ca("CA"));
  ASSERT_TRUE(files.save_kubeconfig("https://10.0.0.1:6443"));
  ASSERT_TRUE(files.save_bootstrap_kubeconfig("https://10.0.0.1:6443", "abcdef.0123456789abcdef"));
  std::ofstream(root_ / "operator-notes.txt") << "mine";
  const auto operator_bootstrap = root_ / "bootstrap-hub.conf";  // yurtadm writes it here
  ASSERT_TRUE(files.forget(operator_bootstrap));
  EXPECT_TRUE(std::filesystem::exists(operator_bootstrap));
  EXPECT_TRUE(std::filesystem::exists(root_ / "operator-notes.txt"));
  EXPECT_FALSE(std::filesystem::exists(files.kubeconfig()));
  EXPECT_FALSE(std::filesystem::exists(files.ca_file()));
  EXPECT_FALSE(std::filesystem::exists(files.current_pem()));
  EXPECT_FALSE(std::filesystem::exists(files.current_pem(Pair::Serving)));
  EXPECT_TRUE(std::filesystem::is_empty(root_ / "pki"));
  ASSERT_TRUE(files.forget({}));
  EXPECT_FALSE(std::filesystem::exists(operator_bootstrap));
}

// Issue 30: a link planted at the temporary name (by whoever could write the directory) never
// makes the hub write a key through it; a failed write leaves no temporary file behind.
TEST_F(Files, AWriteNeverFollowsALinkAtItsTemporaryNameAndLeavesNothingOnFailure) {
  std::filesystem::create_directories(root_ / "pki");
  const auto target = root_ / "elsewhere";
  std::ofstream(target) << "untouched";
  const auto path = root_ / "pki" / "ca.crt";
  std::filesystem::create_symlink(target, path.string() + ".tmp");
  ASSERT_TRUE(write_file_atomically(path, "CA", 0644));
  EXPECT_EQ(read(path), "CA");
  EXPECT_EQ(read(target), "untouched");
  EXPECT_FALSE(std::filesystem::is_symlink(path));
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  // A rename that fails (the destination is a non-empty directory): no temporary left.
  const auto blocked = root_ / "pki" / "blocked";
  std::filesystem::create_directories(blocked / "x");
  EXPECT_FALSE(write_file_atomically(blocked, "data", 0600));
  EXPECT_FALSE(std::filesystem::exists(blocked.string() + ".tmp"));
}

TEST_F(Files, ARootDirOthersCanWriteIsWarnedAbout) {
  std::filesystem::create_directories(root_);
  ::chmod(root_.c_str(), 0755);
  EXPECT_FALSE(unsafe_directory_warning(root_));
  ::chmod(root_.c_str(), 01777);
  auto warning = unsafe_directory_warning(root_);
  ASSERT_TRUE(warning);
  EXPECT_NE(warning->find("mode 1777"), std::string::npos) << *warning;
  EXPECT_FALSE(unsafe_directory_warning(root_ / "missing"));
}

}  // namespace
}  // namespace yurthub::hub
