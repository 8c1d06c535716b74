// The hub under failure, with the real binary: the apiserver dying in the middle of a watch and
// coming back, malformed and hostile clients, a 100 MB list (proves streaming: the hub's memory
// stays small), and a SIGTERM drain. Assertions are on what a client observes.
#include <signal.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cache/lmdb_store.h"
#include "test/integration/cluster.h"
#include "test/integration/http_client.h"

namespace yurthub::test {
namespace {

using testing::HasSubstr;
using testing::StartsWith;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;  // ASan's shadow memory makes RSS meaningless
#else
constexpr bool kSanitized = false;
#endif

int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Streams a response and counts its bytes without keeping them.
std::size_t count_response_bytes(int port, const std::string& request) {
  const int fd = connect_loopback(port);
  if (fd < 0) return 0;
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  timeval tv{60, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::size_t total = 0;
  char buf[1 << 16];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) total += static_cast<std::size_t>(n);
  ::close(fd);
  return total;
}

std::string get(int port, const std::string& target, const std::string& agent = "kubelet/v1.32.4") {
  return raw_http(port, "GET " + target + " HTTP/1.1\r\nHost: hub\r\nUser-Agent: " + agent +
                            "\r\nConnection: close\r\n\r\n");
}

class HubResilience : public testing::Test {
 protected:
  void start(ClusterOptions options = {}) {
    cluster_ = std::make_unique<Cluster>(std::move(options));
    cluster_->start_apiserver();
    cluster_->start_hub();
  }
  std::unique_ptr<Cluster> cluster_;
};

TEST_F(HubResilience, ApiserverDyingEndsTheWatchAndTheNextRequestGets503Status) {
  start();
  auto watch = Process::start(cluster_->kubectl_argv({"get", "nodes", "-w"}),
                              cluster_->dir() + "/watch.log");
  ASSERT_TRUE(watch);
  // kubectl prints the list, then opens the watch.
  ASSERT_TRUE(watch->wait_for_log("edge-node-2", std::chrono::seconds(20))) << watch->log();
  ASSERT_TRUE(cluster_->apiserver().wait_for_log("GET /api/v1/nodes\\?.*watch=true",
                                                 std::chrono::seconds(20)))
      << "kubectl's watch did not reach the apiserver";
  ASSERT_TRUE(watch->running()) << watch->log();

  cluster_->stop_apiserver(SIGKILL);
  // kubectl's watch must end promptly (YurtHub #2792 left such watches hanging).
  EXPECT_TRUE(watch->wait_exit(std::chrono::seconds(5)).has_value())
      << "the client's watch was still open 5 s after the apiserver died\n"
      << watch->log();

  // A component the hub does not cache (kubelet's reads would be answered from the cache).
  const std::string response =
      get(cluster_->proxy_port(), "/api/v1/namespaces/default/pods", "curl/8.0");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 503"));
  EXPECT_THAT(response, HasSubstr("\"kind\":\"Status\""));
  EXPECT_THAT(response, HasSubstr("\"code\":503"));
  EXPECT_THAT(response, HasSubstr("\"reason\":\"ServiceUnavailable\""));
  EXPECT_TRUE(cluster_->hub_running());
}

// The cache never stops the hub: a corrupt data.mdb (a torn disk, another program's file) is
// moved aside and the hub serves, caching again from scratch. Before, it exited, and a restart
// loop left its port free for any local user to bind.
TEST_F(HubResilience, ACorruptCacheIsMovedAsideAndTheHubServes) {
  start();
  cluster_->hub().signal(SIGTERM);
  ASSERT_TRUE(cluster_->hub().wait_exit(std::chrono::seconds(10)));
  {
    std::ofstream corrupt(cluster_->dir() + "/cache/data.mdb", std::ios::binary | std::ios::trunc);
    corrupt << std::string(16384, '\x5a');
  }
  cluster_->start_hub();
  EXPECT_THAT(get(cluster_->proxy_port(), "/api/v1/namespaces/default/pods/web-0"),
              StartsWith("HTTP/1.1"));
  EXPECT_THAT(get(cluster_->proxy_port(), "/api/v1/nodes/edge-node-1"), StartsWith("HTTP/1.1 200"));
  EXPECT_EQ(cluster_->metric("node_yurthub_cache_resets_total"), 1);
  EXPECT_EQ(cluster_->metric("node_yurthub_cache_available"), 1);
  EXPECT_THAT(cluster_->hub().log(), HasSubstr("it was moved to"));
}

// Issue 30: a store LMDB opens but this hub cannot use (written by a newer yurthub, before a
// downgrade) holds acknowledged offline writes. It is left where it is, journal included, and
// the hub serves online only; a hub that reads it later replays the write to the cloud. Any open
// error used to move the store aside, and the write was lost.
TEST_F(HubResilience, AStoreOfANewerHubStaysWithItsJournalAndTheHubServesOnline) {
  start(demo_cluster());
  const std::string pod = "/api/v1/namespaces/default/pods/web-0";
  const double ops = cluster_->cache_ops();
  ASSERT_THAT(get(cluster_->proxy_port(), pod), StartsWith("HTTP/1.1 200"));
  ASSERT_TRUE(cluster_->wait_cache_committed(ops));
  cluster_->apiserver().signal(SIGSTOP);
  ASSERT_TRUE(cluster_->wait_hub_sees_apiserver(false, std::chrono::seconds(15)));
  auto patched = http_request(
      cluster_->proxy_port(), "PATCH", pod + "/status",
      {{"User-Agent", kKubeletAgent}, {"Content-Type", "application/merge-patch+json"}},
      R"({"status":{"podIP":"192.0.2.77"}})");
  ASSERT_EQ(patched.status, 200) << patched.body;
  cluster_->hub().signal(SIGTERM);
  ASSERT_TRUE(cluster_->hub().wait_exit(std::chrono::seconds(10)));
  const std::string cache = cluster_->dir() + "/cache";
  ASSERT_TRUE(cache::write_format_version_for_testing(cache, cache::kStoreFormatVersion + 1));
  cluster_->apiserver().signal(SIGCONT);

  cluster_->start_hub();
  EXPECT_EQ(cluster_->metric("node_yurthub_cache_available"), 0);
  EXPECT_THAT(get(cluster_->proxy_port(), "/api/v1/nodes/edge-node-1"), StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(cluster_->hub().log(), HasSubstr("newer than this yurthub reads"));
  for (const auto& entry : std::filesystem::directory_iterator(cache)) {
    EXPECT_FALSE(entry.path().filename().string().starts_with("unusable-")) << entry.path();
  }
  auto cloud = cluster_->kubectl_direct({"get", "pod", "web-0", "-o", "jsonpath={.status.podIP}"});
  EXPECT_NE(cloud.out, "192.0.2.77") << "not replayed by a hub without its store";

  cluster_->hub().signal(SIGTERM);
  ASSERT_TRUE(cluster_->hub().wait_exit(std::chrono::seconds(10)));
  ASSERT_TRUE(cache::write_format_version_for_testing(cache, cache::kStoreFormatVersion));
  cluster_->start_hub();
  std::string ip;
  for (int i = 0; i < 100 && ip != "192.0.2.77"; ++i) {
    ip = cluster_->kubectl_direct({"get", "pod", "web-0", "-o", "jsonpath={.status.podIP}"}).out;
    if (ip != "192.0.2.77") std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(ip, "192.0.2.77") << cluster_->hub().log();
}

TEST_F(HubResilience, ServerComesBackHealthyAfterTheThreshold) {
  start();
  cluster_->stop_apiserver(SIGKILL);
  // Wait until the hub has judged the server unhealthy.
  for (int i = 0; i < 100 && cluster_->metric(
                                 "node_yurthub_server_healthy_status{server=\"https://127.0.0.1:" +
                                 std::to_string(cluster_->apiserver_port()) + "\"}") != 0;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_THAT(get(cluster_->proxy_port(), "/api/v1/nodes", "curl/8.0"), StartsWith("HTTP/1.1 503"));

  cluster_->start_apiserver();
  std::string response;
  for (int i = 0; i < 100; ++i) {  // --heartbeat-healthy-threshold=2 at 1 s intervals
    response = get(cluster_->proxy_port(), "/api/v1/nodes", "curl/8.0");
    if (response.rfind("HTTP/1.1 200", 0) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_THAT(response, StartsWith("HTTP/1.1 200"));
}

TEST_F(HubResilience, MalformedRequestsGetErrorsAndTheHubKeepsServing) {
  start();
  const int port = cluster_->proxy_port();
  EXPECT_THAT(raw_http(port, "THIS IS NOT HTTP\r\n\r\n"), StartsWith("HTTP/1.1 400"));
  EXPECT_THAT(raw_http(port, "GET /version HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n"),
              StartsWith("HTTP/1.1 400"));

  const std::string huge =
      "GET /version HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(200 * 1024, 'a') + "\r\n\r\n";
  const std::string too_large = raw_http(port, huge);
  EXPECT_THAT(too_large, StartsWith("HTTP/1.1 431"));
  EXPECT_THAT(too_large, HasSubstr("\"kind\":\"Status\""));

  // A chunked body that stops half-way, then the client disappears.
  raw_http(port,
           "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
           "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
           "40\r\n{\"apiVersion\":\"v1\"",
           std::chrono::milliseconds(500));
  // Broken chunk framing.
  EXPECT_THAT(raw_http(port,
                       "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
                       "Transfer-Encoding: chunked\r\n\r\nZZZ\r\n{}\r\n0\r\n\r\n"),
              StartsWith("HTTP/1.1 400"));
  // A body over the limit, announced up front.
  EXPECT_THAT(raw_http(port,
                       "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
                       "Content-Length: 999999999\r\n\r\n{"),
              StartsWith("HTTP/1.1 413"));

  auto nodes = cluster_->kubectl({"get", "nodes", "-o", "name"});
  EXPECT_EQ(nodes.exit_code, 0) << nodes.err;
  EXPECT_THAT(nodes.out, HasSubstr("node/edge-node-1"));
  EXPECT_TRUE(cluster_->hub_running());
  EXPECT_GE(cluster_->metric("node_yurthub_request_failures_total{reason=\"header_too_large\"}"),
            1);
  EXPECT_GE(cluster_->metric("node_yurthub_request_failures_total{reason=\"bad_request\"}"), 2);
}

// 10,000 pods of ~10 KiB: a list of about 100 MB.
ClusterOptions big_list_options() {
  ClusterOptions options;
  options.apiserver_flags = {"--generate-pods=10000", "--generate-pod-bytes=10240",
                             "--generate-node=edge-node-1"};
  return options;
}

TEST_F(HubResilience, HundredMegabyteListStreamsThroughInSmallMemory) {
  start(big_list_options());
  const std::size_t bytes = count_response_bytes(
      cluster_->proxy_port(),
      "GET /api/v1/namespaces/bulk/pods HTTP/1.1\r\nHost: hub\r\nUser-Agent: curl/8\r\n"
      "Connection: close\r\n\r\n");
  EXPECT_GE(bytes, 100u * 1000 * 1000);
  if (kSanitized) GTEST_SKIP() << "RSS is not meaningful under AddressSanitizer";
  const long peak_kib = cluster_->hub().peak_rss_kib();
  EXPECT_GT(peak_kib, 0);
  EXPECT_LT(peak_kib, 30 * 1024) << "the hub buffered the list instead of streaming it";
}

TEST_F(HubResilience, ClientThatStopsReadingDoesNotBlockOthers) {
  start(big_list_options());
  // Ask for the big list and never read it: the hub's writes to this client stall.
  const int stalled = connect_loopback(cluster_->proxy_port());
  ASSERT_GE(stalled, 0);
  const std::string request =
      "GET /api/v1/namespaces/bulk/pods HTTP/1.1\r\nHost: hub\r\nConnection: close\r\n\r\n";
  ::send(stalled, request.data(), request.size(), MSG_NOSIGNAL);
  ASSERT_TRUE(cluster_->apiserver().wait_for_log("GET /api/v1/namespaces/bulk/pods",
                                                 std::chrono::seconds(10)))
      << "the stalled request did not reach the apiserver";

  auto nodes = cluster_->kubectl({"get", "nodes", "-o", "name"});
  EXPECT_EQ(nodes.exit_code, 0) << nodes.err;
  EXPECT_THAT(nodes.out, HasSubstr("node/edge-node-2"));
  ::close(stalled);
  EXPECT_TRUE(cluster_->hub_running());
}

TEST_F(HubResilience, PipelinedRequestsAreAnsweredInOrder) {
  start();
  // Two requests in one write: the second waits in the session's buffer until the first is done.
  const std::string response =
      raw_http(cluster_->proxy_port(),
               "GET /api/v1/nodes/edge-node-1 HTTP/1.1\r\nHost: hub\r\n\r\n"
               "GET /api/v1/nodes/edge-node-2 HTTP/1.1\r\nHost: hub\r\nConnection: close\r\n\r\n");
  const auto first = response.find("\"name\":\"edge-node-1\"");
  const auto second = response.find("\"name\":\"edge-node-2\"");
  ASSERT_NE(first, std::string::npos) << response;
  ASSERT_NE(second, std::string::npos) << response;
  EXPECT_LT(first, second);
  EXPECT_EQ(response.find("HTTP/1.1 200"), 0u);
  EXPECT_NE(response.find("HTTP/1.1 200", 1), std::string::npos);
}

TEST_F(HubResilience, UpstreamConnectionsAreReused) {
  start();
  const std::string server = "https://127.0.0.1:" + std::to_string(cluster_->apiserver_port());
  auto count = [&](const char* event) {
    return cluster_->metric("node_yurthub_upstream_connections_total{server=\"" + server +
                            "\",event=\"" + event + "\"}");
  };
  // The hub's own informers take pooled connections too, and under load one may start its watch
  // after this: count what these requests add, less what else reached the apiserver meanwhile.
  auto api_requests = [&] { return cluster_->apiserver_requests(R"(\] [A-Z]+ /apis?/)"); };
  const double opened = std::max(0.0, count("opened"));
  const double reused = std::max(0.0, count("reused"));
  const int api_before = api_requests();
  // Five requests in one write, so each reaches the forwarder after the one before it gave its
  // connection back. (On five client connections, a request accepted before the last response's
  // release ran could not find it idle and dialled: a second connection, seen once in CI.)
  std::string requests;
  for (int i = 0; i < 5; ++i) {
    requests += "GET /api/v1/nodes HTTP/1.1\r\nHost: hub\r\nUser-Agent: curl/8.0\r\n";
    requests += i == 4 ? "Connection: close\r\n\r\n" : "\r\n";
  }
  const std::string responses = raw_http(cluster_->proxy_port(), requests);
  std::size_t answered = 0;
  for (std::size_t at = responses.find("HTTP/1.1 200 OK"); at != std::string::npos;
       at = responses.find("HTTP/1.1 200 OK", at + 1)) {
    ++answered;
  }
  EXPECT_EQ(answered, 5u) << responses.substr(0, 500);
  // A connection is counted when it is taken, a request logged when the apiserver answers it.
  double others = 0;
  EXPECT_TRUE(eventually(
      [&] {
        others = api_requests() - api_before - 5;
        return count("opened") - opened + count("reused") - reused <= 5 + others;
      },
      std::chrono::seconds(10)));
  EXPECT_GE(count("reused") - reused, 4);
  EXPECT_LE(count("opened") - opened, 1 + others);
}

TEST_F(HubResilience, ClientLeavingAnIdleWatchCancelsTheUpstreamWatch) {
  start();
  const int fd = connect_loopback(cluster_->proxy_port());
  ASSERT_GE(fd, 0);
  const std::string request =
      "GET /api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0 HTTP/1.1\r\n"
      "Host: hub\r\nUser-Agent: kubelet/v1.32.4\r\n\r\n";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  char buf[4096];
  ASSERT_GT(::recv(fd, buf, sizeof buf, 0), 0);  // the watch's response header
  ::close(fd);
  // No event will ever come on this watch; only the client leaving can end it, at the hub and at
  // the apiserver.
  bool ended = false;
  for (int i = 0; i < 100 && !ended; ++i) {
    ended = cluster_->metric(R"(node_yurthub_streams_ended_total{reason="client_gone"})") >= 1;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(ended) << cluster_->hub().log();
  EXPECT_TRUE(cluster_->apiserver().wait_for_log("watch .*configmaps.* ended: client hung up",
                                                 std::chrono::seconds(5)))
      << cluster_->apiserver().log();
}

TEST_F(HubResilience, SigtermEndsWatchesAndExitsCleanly) {
  start();
  auto watch = Process::start(cluster_->kubectl_argv({"get", "nodes", "-w"}),
                              cluster_->dir() + "/watch.log");
  ASSERT_TRUE(watch);
  ASSERT_TRUE(watch->wait_for_log("edge-node-2", std::chrono::seconds(20))) << watch->log();

  cluster_->hub().signal(SIGTERM);
  auto status = cluster_->hub().wait_exit(std::chrono::seconds(10));
  ASSERT_TRUE(status.has_value()) << "the hub did not exit after SIGTERM\n"
                                  << cluster_->hub().log();
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 0);
  EXPECT_THAT(cluster_->hub().log(), HasSubstr("draining"));
  EXPECT_TRUE(watch->wait_exit(std::chrono::seconds(5)).has_value()) << watch->log();
}

}  // namespace
}  // namespace yurthub::test
