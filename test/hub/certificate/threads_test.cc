// Tests for the certificate units' threads, as the hub runs them: the kubeconfig reloader's thread
// replacing the token a proxy worker reads, and the client certificate manager's renewal thread
// woken by join tokens posted from the admin server's thread. Built under ThreadSanitizer too
// (`cmake --build --preset tsan --target certificate_tests`).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <boost/asio/ssl/context.hpp>

#include "base/clock.h"
#include "base/metrics.h"
#include "hub/certificate/client_certificate_manager.h"
#include "hub/certificate/kubeconfig_reloader.h"
#include "kube/kubeconfig.h"
#include "net/files.h"
#include "net/tls.h"
#include "test/base/poll.h"

namespace yurthub::hub {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// Polls `done` every millisecond until it holds or `limit` passes.
template <class Done>
bool within(milliseconds limit, Done done) {
  return ::yurthub::test_support::eventually(done, limit);
}

// The value of the series that `prefix` (name, labels and a space) starts in `registry`'s
// rendering; 0 when it is absent.
double series(const base::MetricsRegistry& registry, const std::string& prefix) {
  const std::string text = registry.render();
  const auto at = text.find("\n" + prefix);
  return at == std::string::npos ? 0 : std::stod(text.substr(at + 1 + prefix.size()));
}

class Threads : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("threads_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write_token(const std::string& token) {
    std::ofstream(dir_ / "token.tmp") << token << "\n";
    fs::rename(dir_ / "token.tmp", dir_ / "token");
  }
  fs::path dir_;
};

TEST_F(Threads, AWorkerSeesTheTokenTheReloaderPutsInPlace) {
  write_token("first");
  const std::string kubeconfig = (dir_ / "hub.conf").string();
  std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
                               "    server: https://127.0.0.1:6443\n"
                               "    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n"
                               "    tokenFile: "
                            << (dir_ / "token").string()
                            << "\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n"
                               "current-context: x\n";
  auto loaded = net::load_kubeconfig(kubeconfig);
  ASSERT_TRUE(loaded) << loaded.error().message;
  auto tls = net::make_upstream_tls(*loaded);
  ASSERT_TRUE(tls) << tls.error().message;
  base::MetricsRegistry registry;
  KubeconfigReloader reloader(kubeconfig, *loaded, tls->hub_identity, tls->hub_token, registry,
                              milliseconds(5));
  reloader.start();

  // A proxy worker: reads the header it would send, as often as it can, until it changes.
  std::atomic<bool> saw_second{false};
  std::thread worker([&] {
    within(milliseconds(10000), [&] { return tls->hub_authorization() == "Bearer second"; });
    saw_second = tls->hub_authorization() == "Bearer second";
  });
  EXPECT_EQ(tls->hub_authorization(), "Bearer first");
  write_token("second");
  worker.join();
  EXPECT_TRUE(saw_second);
}

TEST_F(Threads, APostedJoinTokenWakesTheRenewalThread) {
  ClientCertificateSettings settings;
  settings.root_dir = dir_;
  settings.node_name = "edge-node-1";
  settings.retry_max = std::chrono::seconds(30);  // without a wake, the retries slow to 30 s
  settings.token_post_interval = std::chrono::seconds(0);  // three posts in a row
  base::MetricsRegistry registry;
  ClientCertificateManager manager(settings, registry);
  const auto failures = [&registry] {
    return series(registry, R"(node_yurthub_client_certificate_renewals_total{result="failure"} )");
  };
  base::TestClock clock;  // the backoff's time passes only when moved here
  manager.start(std::make_shared<net::ReplaceableContext>(
      std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_client)));
  // No --server-addr: every renewal fails at once, and the backoff doubles from 1 s.
  ASSERT_TRUE(within(milliseconds(10000), [&] {
    clock.advance(std::chrono::milliseconds(500));
    return failures() >= 3;
  }));
  // The backoff is 4 s and more now, and the clock no longer moves: only a token can end it.
  for (int i = 0; i < 3; ++i) {
    const auto before = failures();
    EXPECT_FALSE(manager.update_join_token("not-a-token"));
    ASSERT_TRUE(manager.update_join_token("abcdef.0123456789abcdef"));
    EXPECT_TRUE(within(milliseconds(3000), [&] { return failures() > before; }))
        << "posted token " << i << " did not wake the renewal";
  }
  manager.stop();
}

// Issue 30: each accepted post wakes the renewal, so posts are rate-limited.
TEST_F(Threads, PostsOfAJoinTokenAreRateLimited) {
  ClientCertificateSettings settings;
  settings.root_dir = dir_;
  settings.node_name = "edge-node-1";
  base::MetricsRegistry registry;
  ClientCertificateManager manager(settings, registry);
  base::TestClock clock;
  ASSERT_TRUE(manager.update_join_token("abcdef.0123456789abcdef"));
  auto again = manager.update_join_token("ghijkl.0123456789ghijkl");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ErrorCode::ResourceExhausted);
  EXPECT_NE(again.error().message.find("post again in 10 s"), std::string::npos)
      << again.error().message;
  clock.advance(std::chrono::seconds(9));
  EXPECT_FALSE(manager.update_join_token("ghijkl.0123456789ghijkl"));
  clock.advance(std::chrono::seconds(1));
  EXPECT_TRUE(manager.update_join_token("ghijkl.0123456789ghijkl"));
}

}  // namespace
}  // namespace yurthub::hub
