// DummyInterfaceKeeper in a fresh network namespace (test/netns.h): the interface comes back
// after someone deletes it, a socket listening on its address serves again once it is back (the
// hub binds the dummy IP once), stop() ends the checks and remove() deletes it; an interface
// that cannot be made at start is reported (problem(), metrics) and tried again until it can,
// then on_first_ready() runs once.
#include "hub/dummy_interface_keeper.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdlib>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "test/netns.h"

namespace yurthub::hub {
namespace {

using test::ChildChecks;

// A TCP socket listening on `address`, port chosen by the kernel; returns the fd and port.
std::pair<int, int> listen_on(const std::string& address) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  inet_pton(AF_INET, address.c_str(), &sa.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 4) != 0) {
    ::close(fd);
    return {-1, 0};
  }
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  return {fd, ntohs(sa.sin_port)};
}

bool connects(const std::string& address, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, address.c_str(), &sa.sin_addr);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
  ::close(fd);
  return ok;
}

net::DummyInterfaceSpec spec_in_child() {
  net::DummyInterfaceSpec spec;
  spec.name = "probe0";
  if (!net::ensure_dummy_interface(spec)) {
    spec.kind = "ifb";  // a kernel without CONFIG_DUMMY: a kind that behaves alike here
  } else {
    (void)net::delete_dummy_interface(spec);
  }
  spec.name = "hub-dummy0";
  return spec;
}

TEST(DummyInterfaceKeeper, RecreatesDeletedInterfaceAndListenerServesAgain) {
  const auto outcome = test::run_in_new_netns([](ChildChecks& c) {
    const auto spec = spec_in_child();
    boost::asio::io_context io;
    base::MetricsRegistry registry;
    DummyInterfaceKeeper keeper(io.get_executor(), spec, registry, std::chrono::milliseconds(50));
    const bool started = keeper.start();
    c.expect(started, "start: " + keeper.problem());
    if (!started) return;
    c.expect(test::interface_flags(spec.name) >= 0, "no interface after start");
    const auto [fd, port] = listen_on(spec.address);
    c.expect(fd >= 0, "cannot listen on the dummy address");
    c.expect(connects(spec.address, port), "no connection before the deletion");

    auto deleted = net::delete_dummy_interface(spec);
    c.expect(deleted.ok() && *deleted, "test setup: deleting the interface");
    c.expect(!connects(spec.address, port), "connected while the interface was gone");
    io.run_for(std::chrono::milliseconds(300));
    c.expect(test::interface_flags(spec.name) >= 0, "the interface was not re-created");
    c.expect(connects(spec.address, port), "the listener does not serve after the repair");

    keeper.stop();
    keeper.remove();
    c.expect(test::interface_flags(spec.name) < 0, "remove() left the interface");
    io.restart();
    io.run_for(std::chrono::milliseconds(200));
    c.expect(test::interface_flags(spec.name) < 0, "re-created after stop()");
    ::close(fd);
  });
  if (!outcome.skip_reason.empty()) GTEST_SKIP() << "no network namespace: " << outcome.skip_reason;
  EXPECT_EQ(outcome.failures, "");
}

bool rendered(const base::MetricsRegistry& registry, const std::string& line) {
  return registry.render().find("\n" + line + "\n") != std::string::npos;
}

TEST(DummyInterfaceKeeper, WithoutNetAdminStartReportsTheInterfaceMissing) {
  const auto outcome = test::run_in_new_netns([](ChildChecks& c) {
    const auto spec = spec_in_child();
    c.expect(test::drop_net_admin(), "test setup: capset");
    boost::asio::io_context io;
    base::MetricsRegistry registry;
    DummyInterfaceKeeper keeper(io.get_executor(), spec, registry);
    c.expect(!keeper.start(), "start succeeded without CAP_NET_ADMIN");
    c.expect(!keeper.ready(), "ready without the interface");
    c.expect(keeper.problem().find("needs CAP_NET_ADMIN") != std::string::npos,
             "problem: " + keeper.problem());
    c.expect(rendered(registry, "node_yurthub_dummy_interface_ready 0"), registry.render());
    c.expect(rendered(registry, "node_yurthub_dummy_interface_failures_total 1"),
             registry.render());
  });
  if (!outcome.skip_reason.empty()) GTEST_SKIP() << "no network namespace: " << outcome.skip_reason;
  EXPECT_EQ(outcome.failures, "");
}

// A link of another kind holds the name at start (the keeper never touches it); once someone
// deletes it, a retry creates the interface and on_first_ready() runs, once.
TEST(DummyInterfaceKeeper, AnInterfaceMissingAtStartIsTriedAgainUntilItExists) {
  if (std::system("ip -V >/dev/null 2>&1") != 0) GTEST_SKIP() << "no ip command (iproute2)";
  const auto outcome = test::run_in_new_netns([](ChildChecks& c) {
    const auto spec = spec_in_child();
    c.expect(std::system("ip link add hub-dummy0 type veth peer name hub-peer0") == 0,
             "test setup: the veth holding the name");
    boost::asio::io_context io;
    base::MetricsRegistry registry;
    DummyInterfaceKeeper keeper(io.get_executor(), spec, registry, std::chrono::milliseconds(200),
                                std::chrono::milliseconds(10));
    int first_ready = 0;
    keeper.on_first_ready([&] { ++first_ready; });
    c.expect(!keeper.start(), "start took a veth for the dummy interface");
    c.expect(keeper.problem().find("of kind veth") != std::string::npos,
             "problem: " + keeper.problem());
    io.run_for(std::chrono::milliseconds(100));
    c.expect(!keeper.ready() && first_ready == 0, "ready while the veth holds the name");
    const std::string text = registry.render();
    c.expect(text.find("node_yurthub_dummy_interface_failures_total 1\n") == std::string::npos &&
                 rendered(registry, "node_yurthub_dummy_interface_ready 0"),
             "no retries counted: " + text);

    c.expect(std::system("ip link del hub-dummy0") == 0, "test setup: deleting the veth");
    for (int i = 0; i < 50 && first_ready == 0; ++i) io.run_for(std::chrono::milliseconds(20));
    c.expect(keeper.ready() && keeper.problem().empty(), "not ready: " + keeper.problem());
    c.expect(first_ready == 1, "on_first_ready ran " + std::to_string(first_ready) + " times");
    c.expect(test::interface_flags(spec.name) >= 0, "no interface");
    c.expect(rendered(registry, "node_yurthub_dummy_interface_ready 1"), registry.render());
    io.run_for(std::chrono::milliseconds(300));  // periodic checks go on; the callback does not
    c.expect(first_ready == 1, "on_first_ready ran again");
    keeper.stop();
    keeper.remove();
  });
  if (!outcome.skip_reason.empty()) GTEST_SKIP() << "no network namespace: " << outcome.skip_reason;
  EXPECT_EQ(outcome.failures, "");
}

}  // namespace
}  // namespace yurthub::hub
