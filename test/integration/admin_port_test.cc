// The admin port (10267) against an unprivileged local user, with the real binary (issue 30):
// nobody (uid 65534) may not post a join token, which would change how the node proves itself to
// the cloud, and cannot take the hub's descriptors with idle admin connections: they count
// against --max-connections-per-peer, by the peer's uid as the kernel knows it. Root (whose
// bucket also holds the hub's own informers' connections) is served throughout. Needs root, as CI
// and the README's commands run.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/integration/cluster.h"
#include "test/integration/http_client.h"

namespace yurthub::test {
namespace {

using testing::HasSubstr;

constexpr uid_t kNobody = 65534;

// POST /v1/token as `uid` (through setpriv), the raw status line and body.
std::string post_token_as(uid_t uid, int admin_port) {
  return run_command(as_user(uid, {"/usr/bin/curl", "-s", "-w", "\n%{http_code}", "-X", "POST",
                                   "-d", R"({"jointoken":"abcdef.0123456789abcdef"})",
                                   "http://127.0.0.1:" + std::to_string(admin_port) + "/v1/token"}),
                     std::chrono::seconds(20))
      .out;
}

class AdminPort : public testing::Test {
 protected:
  static ClusterOptions options() {
    ClusterOptions o = demo_cluster();
    o.hub_flags = {"--max-connections-per-peer=16"};
    return o;
  }
  void SetUp() override {
    if (::getuid() != 0) GTEST_SKIP() << "needs root to act as another user";
    cluster_.start_apiserver();
    cluster_.start_hub();
  }
  Cluster cluster_{options()};
};

TEST_F(AdminPort, OnlyRootMayPostAJoinToken) {
  const std::string as_nobody = post_token_as(kNobody, cluster_.admin_port());
  EXPECT_THAT(as_nobody, HasSubstr("only from root or the hub's own user"));
  EXPECT_THAT(as_nobody, testing::EndsWith("403"));
  // Root passes the gate (this hub has no join token to replace: 400, not 403).
  const std::string as_root = post_token_as(0, cluster_.admin_port());
  EXPECT_THAT(as_root, testing::EndsWith("400")) << as_root;
  EXPECT_THAT(cluster_.hub().log(), HasSubstr("refused a join token posted by uid 65534"));
}

TEST_F(AdminPort, AUsersIdleConnectionsAreBoundedAndRootIsStillServed) {
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const int port = cluster_.admin_port();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // nobody opens 17 connections, asks on each, and keeps them open
    if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(2);
    std::vector<int> fds;
    char answered = 0;
    for (int i = 0; i < 17; ++i) {
      const int fd = connect_to(port, std::chrono::seconds(5));
      if (fd < 0) continue;
      fds.push_back(fd);
      const std::string get = "GET /v1/healthz HTTP/1.1\r\nHost: x\r\n\r\n";
      if (::write(fd, get.data(), get.size()) != static_cast<ssize_t>(get.size())) continue;
      char buf[512];
      if (::read(fd, buf, sizeof buf) > 0) ++answered;
    }
    (void)!::write(report[1], &answered, 1);
    ::pause();
    ::_exit(0);
  }
  char answered = 0;
  ASSERT_EQ(::read(report[0], &answered, 1), 1);
  EXPECT_EQ(answered, 16) << "the 17th connection of one user is over --max-connections-per-peer";
  EXPECT_EQ(cluster_.admin_get("/v1/healthz"), "OK") << "root, another peer, is still served";
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(report[0]);
  ::close(report[1]);
}

}  // namespace
}  // namespace yurthub::test
