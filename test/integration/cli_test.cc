// The yurthub command line as an operator meets it: bad flags and unreadable credentials are one
// line on stderr and exit status 2; --help and --version work without the required flags.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "test/integration/process.h"

namespace yurthub::test {
namespace {

using testing::HasSubstr;

CommandResult yurthub(std::vector<std::string> args) {
  args.insert(args.begin(), YURTHUB_BIN);
  return run_command(args, std::chrono::seconds(10));
}

int lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST(Cli, UnknownFlagIsOneLineAndExit2) {
  auto r = yurthub({"--server-addr=https://127.0.0.1:6443", "--node-name=n", "--no-such-flag=1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--no-such-flag"));
}

TEST(Cli, BadValuesAreRejected) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--server-addr=http://127.0.0.1:8080", "--node-name=n"},
           {"--server-addr=https://127.0.0.1:6443", "--node-name=n", "--lb-mode=random"},
           {"--server-addr=https://127.0.0.1:6443", "--node-name=n", "--proxy-port=70000"},
           {"--server-addr=https://127.0.0.1:6443", "--node-name=n", "--working-mode=local"},
           {"--node-name=n"}}) {
    auto r = yurthub(args);
    EXPECT_EQ(r.exit_code, 2) << args.back();
    EXPECT_EQ(lines(r.err), 1) << r.err;
  }
}

TEST(Cli, UnreadableKubeconfigIsExit2) {
  TempDir dir;
  auto r = yurthub({"--server-addr=https://127.0.0.1:6443", "--node-name=n",
                    "--kubeconfig=" + dir.path() + "/missing.conf"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("missing.conf"));

  std::ofstream(dir.path() + "/broken.conf") << "clusters: [ {";
  r = yurthub({"--server-addr=https://127.0.0.1:6443", "--node-name=n",
               "--kubeconfig=" + dir.path() + "/broken.conf"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
}

TEST(Cli, HelpAndVersion) {
  auto help = yurthub({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--server-addr"));
  EXPECT_THAT(help.out, HasSubstr("--heartbeat-interval-seconds"));
  auto version = yurthub({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.out, HasSubstr("yurthub"));
}

TEST(Cli, PortInUseIsExit1) {
  TempDir dir;
  auto certs = run_command(
      {"/bin/bash", std::string(YURTHUB_SOURCE_DIR) + "/scripts/gen-certs.sh", dir.path()},
      std::chrono::seconds(30));
  ASSERT_EQ(certs.exit_code, 0);
  auto hub = Process::start({YURTHUB_BIN, "--server-addr=https://127.0.0.1:1", "--node-name=n",
                             "--kubeconfig=" + dir.path() + "/hub.kubeconfig", "--proxy-port=0",
                             "--serve-port=0", "--enable-dummy-if=false"},
                            dir.path() + "/hub.log");
  // A running hub holds a port; a second hub asked for the same one cannot start.
  auto port =
      hub->wait_for_log(R"(proxy listening on 127\.0\.0\.1:(\d+))", std::chrono::seconds(10));
  ASSERT_TRUE(port) << hub->log();
  auto r = yurthub({"--server-addr=https://127.0.0.1:1", "--node-name=n",
                    "--kubeconfig=" + dir.path() + "/hub.kubeconfig", "--proxy-port=" + *port,
                    "--serve-port=0", "--enable-dummy-if=false"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot listen"));
}

}  // namespace
}  // namespace yurthub::test
