// The hub run from sockets systemd holds for it (yurthub.socket, the LISTEN_FDS protocol), with
// the real binary: it serves on the sockets it was given instead of binding its own, and because
// the ports stay held while the hub is down, no other local user can bind 10261 and take
// kubelet's requests in the gap (issue 30); a request made in the gap waits in the socket's
// backlog and is answered by the restarted hub.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/integration/cluster.h"
#include "test/integration/http_client.h"

namespace yurthub::test {
namespace {

using testing::HasSubstr;

// A listening socket on 127.0.0.1 at a free port, numbered at `at` or above, close-on-exec (only
// the hub gets it, as its descriptor 3 or 4).
int listening_socket(int at, int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, 64) != 0)
    return -1;
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  *port = ntohs(address.sin_port);
  const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, at);
  ::close(fd);
  return high;
}

// Whether anyone can bind 127.0.0.1:`port` now.
bool port_free(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return bound;
}

class SocketActivation : public testing::Test {
 protected:
  void SetUp() override {
    proxy_fd_ = listening_socket(100, &proxy_port_);
    admin_fd_ = listening_socket(101, &admin_port_);
    ASSERT_GE(proxy_fd_, 100);
    ASSERT_GE(admin_fd_, 100);
    ClusterOptions o = demo_cluster();
    o.hub_inherited_fds = {proxy_fd_, admin_fd_};
    o.hub_flags = {"--proxy-port=" + std::to_string(proxy_port_),
                   "--serve-port=" + std::to_string(admin_port_)};
    cluster_ = std::make_unique<Cluster>(o);
    cluster_->start_apiserver();
  }
  void TearDown() override {
    cluster_.reset();
    ::close(proxy_fd_);
    ::close(admin_fd_);
  }
  int proxy_fd_ = -1, admin_fd_ = -1, proxy_port_ = 0, admin_port_ = 0;
  std::unique_ptr<Cluster> cluster_;
};

TEST_F(SocketActivation, TheHubServesOnTheSocketsItIsGivenAndTheyOutliveIt) {
  cluster_->start_hub();
  EXPECT_THAT(cluster_->hub().log(),
              HasSubstr("proxy listening on 127.0.0.1:" + std::to_string(proxy_port_) +
                        " (socket from systemd)"));
  EXPECT_THAT(cluster_->hub().log(),
              HasSubstr("admin listening on 127.0.0.1:" + std::to_string(admin_port_) +
                        " (socket from systemd)"));
  EXPECT_EQ(cluster_->proxy_port(), proxy_port_);
  EXPECT_EQ(kubelet_get(proxy_port_, "/api/v1/nodes/edge-node-1").status, 200);

  // The hub dies; the port stays held (nobody can squat it), and a request made now waits.
  cluster_->hub().signal(SIGKILL);
  cluster_->hub().wait_exit(std::chrono::seconds(10));
  EXPECT_FALSE(port_free(proxy_port_)) << "another process could take kubelet's requests";
  const int waiting = connect_to(proxy_port_, std::chrono::seconds(30));
  ASSERT_GE(waiting, 0);
  const std::string request =
      "GET /api/v1/nodes/edge-node-1 HTTP/1.1\r\nHost: hub\r\nUser-Agent: kubelet/v1.26.1\r\n"
      "Connection: close\r\n\r\n";
  ASSERT_EQ(::write(waiting, request.data(), request.size()), static_cast<ssize_t>(request.size()));

  cluster_->start_hub();
  char buf[64] = {};
  ASSERT_GT(::read(waiting, buf, sizeof buf - 1), 0);
  EXPECT_THAT(std::string(buf), testing::StartsWith("HTTP/1.1 200"));
  ::close(waiting);
}

TEST_F(SocketActivation, WithoutItsSocketsTheHubBindsItsOwn) {
  // A socket for another port than the hub's is not taken, and closed with a warning; the hub
  // binds its own for the rest.
  ClusterOptions o = demo_cluster();
  o.hub_inherited_fds = {admin_fd_};
  Cluster cluster(o);
  cluster.start_apiserver();
  cluster.start_hub();
  EXPECT_THAT(cluster.hub().log(),
              HasSubstr("no listener of the hub is on 127.0.0.1:" + std::to_string(admin_port_)));
  EXPECT_NE(cluster.admin_port(), admin_port_);
  EXPECT_EQ(kubelet_get(cluster.proxy_port(), "/api/v1/nodes/edge-node-1").status, 200);
}

}  // namespace
}  // namespace yurthub::test
