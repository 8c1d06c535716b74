// DummyInterfaceKeeper in a fresh network namespace (test/netns.h): the interface comes back
// after someone deletes it, a socket listening on its address serves again once it is back (the
// hub binds the dummy IP once, at start), stop() ends the checks and remove() deletes it.
#include "hub/dummy_interface_keeper.h"

#include <arpa/inet.h>
#include <netinet/in.h>

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
    DummyInterfaceKeeper keeper(io.get_executor(), spec, std::chrono::milliseconds(50));
    auto started = keeper.start();
    c.expect(started.ok(), "start: " + (started ? "" : started.error().message));
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

TEST(DummyInterfaceKeeper, StartFailsWithoutNetAdmin) {
  const auto outcome = test::run_in_new_netns([](ChildChecks& c) {
    const auto spec = spec_in_child();
    c.expect(test::drop_net_admin(), "test setup: capset");
    boost::asio::io_context io;
    DummyInterfaceKeeper keeper(io.get_executor(), spec);
    auto started = keeper.start();
    c.expect(
        !started.ok() && started.error().message.find("needs CAP_NET_ADMIN") != std::string::npos,
        "start: " + (started ? "succeeded" : started.error().message));
  });
  if (!outcome.skip_reason.empty()) GTEST_SKIP() << "no network namespace: " << outcome.skip_reason;
  EXPECT_EQ(outcome.failures, "");
}

}  // namespace
}  // namespace yurthub::hub
