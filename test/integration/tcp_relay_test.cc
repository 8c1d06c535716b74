// TcpRelay, the partition tool of the integration tests: alone in front of an echo server (bytes
// pass both ways, cut resets and refuses, blackhole holds bytes until heal), then between the
// real hub and the fake apiserver (a cut takes the hub offline while the cloud keeps changing),
// and Cluster::apiserver_requests, which counts the requests that reached the fake apiserver.
#include "test/integration/tcp_relay.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/integration/cluster.h"
#include "test/integration/http_client.h"

namespace yurthub::test {
namespace {

using namespace std::chrono_literals;
using testing::HasSubstr;
using testing::Not;

// Echoes every connection on 127.0.0.1:`port` (0: an ephemeral one), one thread per connection;
// ends its writes after the client's FIN.
class EchoServer {
 public:
  explicit EchoServer(int port = 0) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;  // a port given back by a closed EchoServer has connections in TIME_WAIT
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof addr;
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(listener_, 16), 0);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &size);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~EchoServer() {
    ::shutdown(listener_, SHUT_RDWR);  // wakes accept()
    acceptor_.join();
    std::lock_guard lock(mutex_);
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    for (auto& t : threads_) t.join();
    for (int fd : fds_) ::close(fd);
    ::close(listener_);
  }
  int port() const { return port_; }

 private:
  void accept_loop() {
    for (int fd; (fd = ::accept(listener_, nullptr, nullptr)) >= 0;) {
      std::lock_guard lock(mutex_);
      fds_.push_back(fd);
      threads_.emplace_back([fd] {
        char buf[16384];
        ssize_t n;
        while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) {
          if (::send(fd, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) return;
        }
        ::shutdown(fd, SHUT_WR);
      });
    }
  }

  int listener_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  std::mutex mutex_;  // guards fds_ and threads_
  std::vector<int> fds_;
  std::vector<std::thread> threads_;
};

void receive_timeout(int fd, std::chrono::milliseconds timeout) {
  timeval tv{static_cast<time_t>(timeout.count() / 1000),
             static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

bool send_all(int fd, const std::string& bytes) {
  for (std::size_t sent = 0; sent < bytes.size();) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

// Up to `size` bytes: fewer at the end of the stream, on an error or at the receive timeout
// (errno then says which).
std::string receive(int fd, std::size_t size) {
  std::string out(size, '\0');
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::recv(fd, out.data() + got, size - got, 0);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

std::string echo(int fd, const std::string& bytes) {
  return send_all(fd, bytes) ? receive(fd, bytes.size()) : "";
}

TEST(TcpRelay, RelaysBytesBothWaysAndPassesTheClose) {
  EchoServer server;
  TcpRelay relay(server.port());
  ASSERT_NE(relay.port(), 0);
  const int fd = connect_to(relay.port(), 10s);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(echo(fd, "hello"), "hello");
  EXPECT_EQ(relay.connections(), 1);
  EXPECT_EQ(relay.accepted(), 1);

  // Far more than the relay buffers (64 KiB a direction), written while read: back-pressure.
  std::string big(4 << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7 + i / 65536);
  bool sent = false;
  std::thread writer([&] { sent = send_all(fd, big); });
  const std::string back = receive(fd, big.size());
  writer.join();
  EXPECT_TRUE(sent);
  EXPECT_TRUE(back == big) << "got " << back.size() << " of " << big.size() << " bytes back";

  ::shutdown(fd, SHUT_WR);  // the FIN passes to the server, whose FIN comes back
  EXPECT_EQ(receive(fd, 1), "");
  EXPECT_TRUE(eventually([&] { return relay.connections() == 0; }, 10s));
  ::close(fd);
}

TEST(TcpRelay, CutResetsConnectionsAndRefusesNewOnesUntilHeal) {
  EchoServer server;
  TcpRelay relay(server.port());
  const int before = connect_to(relay.port(), 10s);
  ASSERT_GE(before, 0);
  ASSERT_EQ(echo(before, "ping"), "ping");

  relay.cut();
  EXPECT_EQ(relay.connections(), 0);
  char byte;
  EXPECT_EQ(::recv(before, &byte, 1, 0), -1);
  EXPECT_EQ(errno, ECONNRESET);  // as a broken link, not a clean end of stream
  ::close(before);
  EXPECT_EQ(connect_to(relay.port(), 10s), -1) << "a cut relay accepted a connection";

  relay.heal();
  const int after = connect_to(relay.port(), 10s);
  ASSERT_GE(after, 0);
  EXPECT_EQ(echo(after, "pong"), "pong");
  EXPECT_EQ(relay.accepted(), 2);  // the refused one never reached the relay
  ::close(after);
}

TEST(TcpRelay, BlackholeHoldsBytesAndConnectionsUntilHeal) {
  EchoServer server;
  TcpRelay relay(server.port());
  const int held = connect_to(relay.port(), 10s);
  ASSERT_GE(held, 0);
  ASSERT_EQ(echo(held, "a"), "a");

  relay.blackhole();
  ASSERT_TRUE(send_all(held, "held"));
  receive_timeout(held, 500ms);
  EXPECT_EQ(receive(held, 4), "") << "bytes passed a blackholed relay";
  // The kernel completes the handshake; the relay neither accepts nor relays it.
  const int waiting = connect_to(relay.port(), 10s);
  ASSERT_GE(waiting, 0);
  ASSERT_TRUE(send_all(waiting, "late"));
  EXPECT_EQ(relay.accepted(), 1);
  EXPECT_EQ(relay.connections(), 1);

  relay.heal();
  receive_timeout(held, 10s);
  EXPECT_EQ(receive(held, 4), "held");
  EXPECT_EQ(receive(waiting, 4), "late");
  EXPECT_EQ(relay.accepted(), 2);
  ::close(held);
  ::close(waiting);
}

TEST(TcpRelay, ResetsClientsWhileTheTargetIsDownAndRelaysWhenItIsBack) {
  auto server = std::make_unique<EchoServer>();
  const int target = server->port();
  TcpRelay relay(target);
  server.reset();  // nothing listens on the target port now
  const int fd = connect_to(relay.port(), 10s);
  ASSERT_GE(fd, 0);
  char byte;
  EXPECT_LE(::recv(fd, &byte, 1, 0), 0);
  EXPECT_NE(errno, EAGAIN) << "the client was left hanging instead of reset";
  ::close(fd);
  EXPECT_TRUE(eventually([&] { return relay.connections() == 0; }, 10s));

  server = std::make_unique<EchoServer>(target);
  const int again = connect_to(relay.port(), 10s);
  ASSERT_GE(again, 0);
  EXPECT_EQ(echo(again, "back"), "back");
  ::close(again);
}

// The hub behind the relay: cut it and the hub goes offline while the cloud still changes;
// heal it and the hub sees the change.
TEST(TcpRelayHub, CutTakesTheHubOfflineWhileTheCloudKeepsChanging) {
  ClusterOptions options = demo_cluster();  // pods in default
  options.through_relay = true;
  Cluster cluster(options);
  cluster.start_apiserver();
  cluster.start_hub();
  ASSERT_TRUE(cluster.wait_hub_sees_apiserver(true, 20s)) << cluster.hub().log();
  EXPECT_EQ(cluster.hub_server_addr(),
            "https://127.0.0.1:" + std::to_string(cluster.relay().port()));
  auto pods = cluster.kubectl({"get", "pods", "-n", "default", "-o", "name"});
  ASSERT_EQ(pods.exit_code, 0) << pods.err;
  EXPECT_THAT(pods.out, HasSubstr("pod/"));
  EXPECT_GE(cluster.relay().accepted(), 1);

  cluster.relay().cut();
  ASSERT_TRUE(cluster.wait_hub_sees_apiserver(false, 20s)) << cluster.hub().log();
  auto created = cluster.kubectl_direct(
      {"create", "-f", "-"}, 20s,
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: made-while-cut\n  namespace: default\n");
  ASSERT_EQ(created.exit_code, 0) << created.err;
  auto offline = cluster.kubectl({"get", "configmap", "made-while-cut", "-n", "default"});
  EXPECT_THAT(offline.out, Not(HasSubstr("made-while-cut"))) << "the hub reached the cloud";

  cluster.relay().heal();
  ASSERT_TRUE(cluster.wait_hub_sees_apiserver(true, 20s)) << cluster.hub().log();
  auto seen =
      cluster.kubectl({"get", "configmap", "made-while-cut", "-n", "default", "-o", "name"});
  EXPECT_EQ(seen.exit_code, 0) << seen.err;
  EXPECT_EQ(seen.out, "configmap/made-while-cut\n");
}

TEST(TcpRelayHub, RelayKeepsItsPortAcrossAnApiserverRestart) {
  ClusterOptions options = demo_cluster();  // pods in default
  options.through_relay = true;
  Cluster cluster(options);
  cluster.start_apiserver();
  cluster.start_hub();
  ASSERT_TRUE(cluster.wait_hub_sees_apiserver(true, 20s));
  const int port = cluster.relay().port();

  cluster.stop_apiserver();
  ASSERT_TRUE(cluster.wait_hub_sees_apiserver(false, 20s));
  cluster.start_apiserver();
  EXPECT_EQ(cluster.relay().port(), port);
  ASSERT_TRUE(cluster.wait_hub_sees_apiserver(true, 20s)) << cluster.hub().log();
  auto pods = cluster.kubectl({"get", "pods", "-n", "default", "-o", "name"});
  EXPECT_EQ(pods.exit_code, 0) << pods.err;
  EXPECT_THAT(pods.out, HasSubstr("pod/"));
}

// A silent partition: the hub's probes get no answer (no reset, no refusal) until heal().
TEST(TcpRelayHub, BlackholeTakesTheHubOfflineUntilHeal) {
  ClusterOptions options = demo_cluster();
  options.through_relay = true;
  Cluster cluster(options);
  cluster.start_apiserver();
  cluster.start_hub();
  ASSERT_TRUE(cluster.wait_hub_sees_apiserver(true, 20s));

  cluster.relay().blackhole();
  ASSERT_TRUE(cluster.wait_hub_sees_apiserver(false, 30s)) << cluster.hub().log();
  cluster.relay().heal();
  ASSERT_TRUE(cluster.wait_hub_sees_apiserver(true, 30s)) << cluster.hub().log();
  auto pods = cluster.kubectl({"get", "pods", "-n", "default", "-o", "name"});
  EXPECT_EQ(pods.exit_code, 0) << pods.err;
  EXPECT_THAT(pods.out, HasSubstr("pod/"));
}

// What a test of "one upstream watch per resource" reads: the fake apiserver's request lines.
TEST(ApiserverRequests, CountsTheRequestsThatReachedTheFakeApiserver) {
  Cluster cluster;
  cluster.start_apiserver();
  cluster.start_hub();
  const std::string watches =
      R"(\] GET /api/v1/namespaces/default/configmaps\?\S*watch=(true|1)\S* user=)";
  const std::string lists =
      R"(\] GET /api/v1/namespaces/default/configmaps\?limit=500\S* user=admin 200$)";
  EXPECT_EQ(cluster.apiserver_requests(watches), 0);

  const int lists_before = cluster.apiserver_requests(lists);
  auto listed = cluster.kubectl_direct({"get", "configmaps", "-n", "default"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(cluster.apiserver_requests(lists), lists_before + 1);

  WatchStream watch(cluster.proxy_port(), "/api/v1/namespaces/default/configmaps?watch=true");
  ASSERT_TRUE(watch.wait_for_header(20s));
  EXPECT_EQ(watch.status(), 200);
  EXPECT_TRUE(eventually([&] { return cluster.apiserver_requests(watches) >= 1; }, 10s));
  EXPECT_EQ(cluster.apiserver_requests(watches), 1) << cluster.apiserver().log();
}

}  // namespace
}  // namespace yurthub::test
