// The Hub when its dummy interface cannot be made at start, in a fresh network namespace
// (test/netns.h): a veth holds the interface's name, so the hub starts on 127.0.0.1 only; once
// the veth is deleted, the keeper's retry creates the interface and the hub binds the plain proxy
// on the dummy IP then, where it serves (401 without a bearer token, as on the dummy IP always).
// In-process rather than the real binary (test/integration/dummy_interface_test.cc) so that it
// runs on kernels without CONFIG_DUMMY too: the link kind is HubOptions::dummy_if_kind.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdlib>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "hub/hub.h"
#include "net/dummy_interface.h"
#include "test/hub/loopback_pki.h"
#include "test/netns.h"

namespace yurthub::hub {
namespace {

constexpr int kProxyPort = 18261;  // any: the namespace is the test's own

// The status line's code of a GET on `address`:`port`, or "" when nothing accepted.
std::string get_status(const std::string& address, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, address.c_str(), &sa.sin_addr);
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
    const std::string request =
        "GET /api/v1/pods HTTP/1.1\r\nHost: hub\r\nConnection: close\r\n\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) > 0) {
      char buf[512];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n > 0) answer.assign(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return answer.size() >= 12 ? answer.substr(9, 3) : "";
}

std::string usable_kind() {
  net::DummyInterfaceSpec probe;
  probe.name = "probe0";
  if (!net::ensure_dummy_interface(probe)) return "ifb";
  (void)net::delete_dummy_interface(probe);
  return "dummy";
}

TEST(HubDummyInterface, ListenersOnTheDummyIpAreBoundOnceTheInterfaceCanBeMade) {
  if (std::system("ip -V >/dev/null 2>&1") != 0) GTEST_SKIP() << "no ip command (iproute2)";
  test_support::LoopbackPki pki;
  const auto outcome = test::run_in_new_netns([&pki](test::ChildChecks& c) {
    c.expect(std::system("ip link add hub-dummy0 type veth peer name hub-peer0") == 0,
             "test setup: the veth holding the name");
    HubOptions options;
    options.working_mode = WorkingMode::Cloud;
    options.servers = {test_support::loopback_server("1")};  // nothing listens: never asked
    options.proxy_port = kProxyPort;
    options.serve_port = 0;
    options.enable_dummy_if = true;
    options.dummy_if_kind = usable_kind();
    base::MetricsRegistry registry;
    Hub hub(options, pki.upstream_tls(), nullptr, registry, nullptr);
    auto started = hub.start();
    c.expect(started.ok(), "start: " + (started ? "" : started.error().message));
    if (!started) return;
    c.expect(get_status("169.254.2.1", kProxyPort) == "", "the dummy IP answered without it");

    std::string loopback, later;
    bool deleted = false;
    std::thread observer([&] {  // while hub.run() serves on this thread
      loopback = get_status("127.0.0.1", kProxyPort);
      deleted = std::system("ip link del hub-dummy0") == 0;
      // The keeper's first retries come after 1 s, 2 s, 4 s.
      for (int i = 0; i < 200 && later.empty(); ++i) {
        later = get_status("169.254.2.1", kProxyPort);
        if (later.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      hub.request_stop();
    });
    hub.run();
    observer.join();
    c.expect(deleted, "test setup: deleting the veth");
    c.expect(!loopback.empty(), "127.0.0.1 is not served");
    c.expect(later == "401", "on the dummy IP once it exists: \"" + later + "\"");
    c.expect(
        registry.render().find("\nnode_yurthub_dummy_interface_ready 1\n") != std::string::npos,
        registry.render());
  });
  if (!outcome.skip_reason.empty()) GTEST_SKIP() << "no network namespace: " << outcome.skip_reason;
  EXPECT_EQ(outcome.failures, "");
}

}  // namespace
}  // namespace yurthub::hub
