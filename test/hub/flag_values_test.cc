// Tests for hub/flag_values: Go durations as time.ParseDuration reads them, server addresses as a
// kubeconfig names them, and the dummy interface's address and name checks. (Flags as a whole are
// in options_test.cc.)
#include "hub/flag_values.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace yurthub::hub {
namespace {

TEST(ParseGoDuration, AcceptsGoSyntax) {
  const std::pair<const char*, long> cases[] = {
      {"0", 0},
      {"40s", 40},
      {"1800s", 1800},
      {"1m30s", 90},
      {"2h", 7200},
      {"500ms", 0},
      {"1500ms", 1},
      {"1h2m3.5s", 3723},
      {"1.5h", 5400},
      {"0.1h", 360},
      {".5m", 30},
      {"5.s", 5},
      {"+3s", 3},
      {"1999999999ns", 1},
      {"2000000us", 2},
      {"3000000\xC2\xB5s", 3},
      {"4000000\xCE\xBCs", 4},
      {"0s", 0},
      {"1h1h", 7200},
      {"1.9999999999s", 1},
      {"2562047h", 2562047L * 3600},
  };
  for (const auto& [text, want] : cases) {
    auto r = parse_go_duration(text);
    ASSERT_TRUE(r.ok()) << text << ": " << r.error().message;
    EXPECT_EQ(r->count(), want) << text;
  }
}

TEST(ParseGoDuration, RejectsGarbage) {
  for (const char* text : {"", "s", "30", "-1s", "-0", "1x", "1.5", ".s", "1h-2m", "abc", "1 s",
                           "9999999999999999999s", "2562048h", "1e3s", "++1s"}) {
    auto r = parse_go_duration(text);
    EXPECT_FALSE(r.ok()) << "accepted " << text << " as " << (r.ok() ? r->count() : 0);
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("invalid duration"), std::string::npos);
    }
  }
}

TEST(ParseServerAddress, NormalisesAKubeconfigServer) {
  auto plain = parse_server_address("https://127.0.0.1:6443");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->host, "127.0.0.1");
  EXPECT_EQ(plain->port, "6443");
  auto v6 = parse_server_address("https://[fd00::1]/");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "fd00::1");
  EXPECT_EQ(v6->port, "443");
  EXPECT_EQ(v6->url, "https://[fd00::1]:443");
  EXPECT_FALSE(parse_server_address("http://10.0.0.1"));
  EXPECT_FALSE(parse_server_address("https://10.0.0.1:6443/api"));
}

TEST(CheckAddresses, DummyIpNodeIpAndInterfaceName) {
  EXPECT_TRUE(check_dummy_if_ip("169.254.2.1"));
  EXPECT_TRUE(check_dummy_if_ip("fd00::2:1"));
  EXPECT_FALSE(check_dummy_if_ip("169.254.31.9"));
  EXPECT_FALSE(check_dummy_if_ip("169.254.1.1"));
  EXPECT_FALSE(check_dummy_if_ip("10.0.0.1"));
  EXPECT_TRUE(check_ip_or_empty(""));
  EXPECT_TRUE(check_ip_or_empty("192.168.0.7"));
  EXPECT_TRUE(check_ip_or_empty("fd00::7"));
  EXPECT_FALSE(check_ip_or_empty("node-1"));
  EXPECT_TRUE(check_interface_name("hub-dummy0"));
  EXPECT_FALSE(check_interface_name("a-name-of-16-chr"));
  EXPECT_FALSE(check_interface_name("a/b"));
  EXPECT_FALSE(check_interface_name(".."));
}

}  // namespace
}  // namespace yurthub::hub
