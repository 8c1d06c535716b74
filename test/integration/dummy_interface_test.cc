// The real hub when its dummy interface cannot be made at start (issue 31): it starts anyway,
// serves kubelet on 127.0.0.1, stays ready, and says on /v1/readyz and /metrics that the
// interface is missing; once the interface can be made, the listener on the dummy IP appears.
// Two realistic failures: a hub without CAP_NET_ADMIN (a container without it; setpriv drops it
// from the bounding set), and a link of another kind holding the name. Each test moves its own
// process into a fresh network namespace first (so the hub, the fake apiserver and kubectl run
// there, never touching the host's interfaces); it is skipped when namespaces are not available.
// The second half (the interface appears) needs a kernel that can create links of kind dummy
// (CONFIG_DUMMY); where it cannot, that half is skipped with a note (the keeper's retry and its
// callback are covered by test/hub/dummy_interface_keeper_test.cc with a kind this kernel has).
#include <sched.h>

#include <cstdlib>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/integration/cluster.h"
#include "test/netns.h"

namespace yurthub::test {
namespace {

using testing::HasSubstr;
using testing::Not;

bool sh(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

bool kernel_makes_dummy_links() {
  if (!sh("ip link add yh-probe0 type dummy")) return false;
  sh("ip link del yh-probe0");
  return true;
}

// "000" when nothing answered, else the HTTP status of a GET on the dummy IP without a token.
std::string status_on_dummy_ip(const std::string& port) {
  return run_command({"/usr/bin/curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time",
                      "5", "http://169.254.2.1:" + port + "/api/v1/pods"},
                     std::chrono::seconds(10))
      .out;
}

class DummyInterfaceMissing : public testing::Test {
 protected:
  void SetUp() override {
    if (::unshare(CLONE_NEWNET) != 0) {
      GTEST_SKIP() << "no network namespace: unshare(CLONE_NEWNET): " << std::strerror(errno);
    }
    ASSERT_TRUE(set_interface_up("lo", true));
    if (!sh("ip -V")) GTEST_SKIP() << "no ip command (iproute2)";
  }

  // Starts the fake apiserver and the hub with --enable-dummy-if, checks what the first half of
  // the header says, and returns nothing; `cluster` keeps running.
  void expect_served_without_interface(Cluster& cluster, const std::string& why) {
    cluster.add_hub_flag("--enable-dummy-if=true");
    cluster.start_apiserver();
    cluster.start_hub();  // waits for /v1/readyz to answer 200: the hub is ready without it
    ASSERT_TRUE(cluster.hub_running()) << cluster.hub().log();

    const CommandResult nodes = cluster.kubectl({"get", "nodes", "-o", "name"});
    EXPECT_EQ(nodes.exit_code, 0) << nodes.err;
    EXPECT_THAT(nodes.out, HasSubstr("node/"));

    int code = 0;
    const std::string readyz = cluster.admin_get("/v1/readyz", &code);
    EXPECT_EQ(code, 200);
    EXPECT_THAT(readyz, HasSubstr("OK\nwarning: "));
    EXPECT_THAT(readyz, HasSubstr(why));
    EXPECT_THAT(readyz, HasSubstr("pods cannot reach the hub on 169.254.2.1"));
    EXPECT_EQ(cluster.metric("node_yurthub_dummy_interface_ready"), 0);
    EXPECT_GE(cluster.metric("node_yurthub_dummy_interface_failures_total"), 1);
    EXPECT_THAT(cluster.hub().log(), HasSubstr("proxy_dummy on 169.254.2.1:"));
    EXPECT_THAT(cluster.hub().log(), HasSubstr("waits for dummy interface hub-dummy0"));
  }

  // The second half: after `make_possible`, the hub binds the dummy IP on its next try.
  void expect_listener_once_possible(Cluster& cluster, const std::string& make_possible) {
    if (!kernel_makes_dummy_links()) {
      std::cout << "[ NOTE ] this kernel cannot create links of kind dummy: the listener's later "
                   "bind is not checked here\n";
      return;
    }
    ASSERT_TRUE(sh(make_possible)) << make_possible;
    // The keeper's retries back off to one a minute.
    const auto port = cluster.hub().wait_for_log(R"(proxy_dummy listening on 169\.254\.2\.1:(\d+))",
                                                 std::chrono::seconds(90));
    ASSERT_TRUE(port) << cluster.hub().log();
    EXPECT_EQ(status_on_dummy_ip(*port), "401");  // served; the dummy IP requires a token
    EXPECT_EQ(cluster.metric("node_yurthub_dummy_interface_ready"), 1);
    EXPECT_THAT(cluster.admin_get("/v1/readyz"), Not(HasSubstr("warning")));
    EXPECT_EQ(cluster.kubectl({"get", "nodes"}).exit_code, 0);
  }
};

TEST_F(DummyInterfaceMissing, WithoutNetAdminTheHubServesLoopbackAndBindsTheDummyIpLater) {
  if (!sh("/usr/bin/setpriv --version")) GTEST_SKIP() << "no setpriv";
  ClusterOptions options;
  // The hub runs without CAP_NET_ADMIN, as in a container that was not given it.
  options.hub_wrapper = {"/usr/bin/setpriv", "--bounding-set=-net_admin", "--inh-caps=-net_admin",
                         "--"};
  Cluster cluster(options);
  expect_served_without_interface(cluster, "needs CAP_NET_ADMIN");
  if (HasFailure()) return;
  // Someone with the capability makes it; the hub only checks that it is in place.
  expect_listener_once_possible(cluster,
                                "ip link add hub-dummy0 type dummy && "
                                "ip addr add 169.254.2.1/32 dev hub-dummy0 && "
                                "ip link set hub-dummy0 up");
}

TEST_F(DummyInterfaceMissing, ALinkOfAnotherKindHoldingTheNameDoesNotStopTheHub) {
  ASSERT_TRUE(sh("ip link add hub-dummy0 type veth peer name hub-peer0"));
  Cluster cluster;
  expect_served_without_interface(cluster, "exists but is of kind veth");
  if (HasFailure()) return;
  EXPECT_EQ(status_on_dummy_ip(std::to_string(cluster.proxy_port())), "000");
  // The veth goes; the hub creates its interface itself on its next try.
  expect_listener_once_possible(cluster, "ip link del hub-dummy0");
}

}  // namespace
}  // namespace yurthub::test
