// The hub's resource bounds against clients that would exhaust them (docs/security.md,
// "Limits"): connections per peer, watches and tunnels, a request body trickled a byte at a time,
// and the slots kubelet's heartbeats keep when everything else gets 429.
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <string_view>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/integration/cluster.h"
#include "test/integration/http_client.h"

namespace yurthub::test {
namespace {

using testing::HasSubstr;
using testing::StartsWith;

ClusterOptions with_flags(std::vector<std::string> flags) {
  ClusterOptions o = demo_cluster();
  o.hub_flags = std::move(flags);
  return o;
}

// A connection that has sent the head of a 100-byte ConfigMap POST as `user_agent`, then
// `body_start`, and nothing more; -1 if it cannot connect.
int start_slow_post(int port, const std::string& user_agent, std::string_view body_start) {
  const int fd = connect_to(port, std::chrono::seconds(2));
  if (fd < 0) return fd;
  const std::string head =
      "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: hub\r\n"
      "User-Agent: " +
      user_agent + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n" +
      std::string(body_start);
  ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
  return fd;
}

std::string read_some(int fd) {
  char buf[4096];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

TEST(HubLimits, OnePeerCannotTakeEveryConnection) {
  Cluster cluster(with_flags({"--max-connections-per-peer=12"}));
  cluster.start_apiserver();
  cluster.start_hub();
  // The hub's own informers hold connections too (they are a peer: this uid). Fill up to the
  // bound with idle connections until one is refused.
  std::vector<int> held;
  std::string refused;
  for (int i = 0; i < 16 && refused.empty(); ++i) {
    const int fd = connect_to(cluster.proxy_port(), std::chrono::seconds(2));
    ASSERT_GE(fd, 0);
    timeval tv{0, 300000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    refused = read_some(fd);  // an admitted idle connection says nothing
    held.push_back(fd);
  }
  EXPECT_THAT(refused, StartsWith("HTTP/1.1 429"));
  EXPECT_THAT(refused, HasSubstr("too many open connections"));
  // Connections closed give their slots back (the admin port's too: it counts against the same
  // bounds, so the metrics are read once they are free).
  for (int fd : held) ::close(fd);
  EXPECT_TRUE(eventually(
      [&] { return kubelet_get(cluster.proxy_port(), "/api/v1/nodes/edge-node-1").status == 200; },
      std::chrono::seconds(2)));
  EXPECT_GE(cluster.metric(R"(node_yurthub_request_failures_total{reason="too_many_connections"})"),
            1);
}

TEST(HubLimits, WatchesAreBounded) {
  Cluster cluster(with_flags({"--max-long-running-requests=6"}));
  cluster.start_apiserver();
  cluster.start_hub();
  // The hub's own informers watch through it too; open watches until one is refused.
  std::vector<std::unique_ptr<WatchStream>> watches;
  int refused = 0;
  for (int i = 0; i < 8 && refused == 0; ++i) {
    watches.push_back(std::make_unique<WatchStream>(
        cluster.proxy_port(),
        "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=30"));
    watches.back()->wait_for_header(std::chrono::seconds(5));
    if (watches.back()->status() == 429) refused = 429;
  }
  EXPECT_EQ(refused, 429);
  // Short requests are not affected.
  EXPECT_EQ(kubelet_get(cluster.proxy_port(), "/api/v1/nodes/edge-node-1").status, 200);
}

// A body trickled a byte at a time once held its slot for ever (each read had a fresh 30 s).
TEST(HubLimits, ARequestBodyHasADeadlineWhateverItsPace) {
  Cluster cluster(with_flags({"--request-body-timeout=2s"}));
  cluster.start_apiserver();
  cluster.start_hub();
  const int fd = start_slow_post(cluster.proxy_port(), "slowloris/1", "");
  ASSERT_GE(fd, 0);
  const auto started = std::chrono::steady_clock::now();
  bool closed = false;
  for (int i = 0; i < 40 && !closed; ++i) {  // 40 bytes over 20 s, were the hub to wait
    if (::send(fd, "{", 1, MSG_NOSIGNAL) < 0) closed = true;
    timeval tv{0, 500000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[512];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) closed = true;
  }
  ::close(fd);
  EXPECT_TRUE(closed);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

// Lease renewals must never get 429: a node whose heartbeats are refused is taken for dead.
TEST(HubLimits, KubeletsHeartbeatsKeepSlotsOfTheirOwn) {
  Cluster cluster(with_flags({"--max-requests-in-flight=1"}));
  cluster.start_apiserver();
  cluster.start_hub();
  ASSERT_TRUE(cluster.hub_running()) << cluster.hub().log();
  // One request holds the only slot: its body never comes.
  const int fd = start_slow_post(cluster.proxy_port(), "kubectl/1", "{");
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(
      eventually([&] { return cluster.metric("node_yurthub_in_flight_requests_total") >= 1; },
                 std::chrono::seconds(5)));
  EXPECT_EQ(http_request(cluster.proxy_port(), "GET", "/api/v1/namespaces/default/pods",
                         {{"User-Agent", "kube-proxy/v1.26.1"}})
                .status,
            429);
  const int lease =
      kubelet_get(cluster.proxy_port(),
                  "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-node-1")
          .status;
  EXPECT_NE(lease, 429);
  EXPECT_EQ(kubelet_get(cluster.proxy_port(), "/api/v1/nodes/edge-node-1").status, 200);
  ::close(fd);
}

}  // namespace
}  // namespace yurthub::test
