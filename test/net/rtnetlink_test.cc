// handle_netlink_datagram (net/rtnetlink.h): how one datagram of the kernel's answer ends a
// request or hands its messages on. The answers are built with NetlinkRequest, which lays a
// message out as the kernel does (header, fixed part, attributes). No socket: the kernel's side is
// test/net/dummy_interface_test.cc's.
#include "net/rtnetlink.h"

#include <linux/rtnetlink.h>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace yurthub::net {
namespace {

// One message of request `seq`, as the kernel sends it.
std::vector<char> message(std::uint16_t type, std::uint32_t seq, const void* fixed,
                          std::size_t size) {
  NetlinkRequest m(type, 0, fixed, size);
  m.header()->nlmsg_seq = seq;
  return m.bytes();
}

std::vector<char> error_message(int error, std::uint32_t seq) {
  nlmsgerr err{};
  err.error = error;
  return message(NLMSG_ERROR, seq, &err, sizeof err);
}

std::vector<char> done_message(int status, std::uint32_t seq) {
  return message(NLMSG_DONE, seq, &status, sizeof status);
}

std::vector<char> joined(std::initializer_list<std::vector<char>> messages) {
  std::vector<char> out;
  for (const auto& m : messages) out.insert(out.end(), m.begin(), m.end());
  return out;
}

// The answer and the messages handed on, or the error's message.
struct Outcome {
  std::string error;
  std::optional<int> answer;
  int handed_on = 0;
};

Outcome read(const std::vector<char>& datagram, std::uint32_t seq = 1) {
  Outcome out;
  auto r = handle_netlink_datagram(datagram.data(), datagram.size(), seq, [&](const nlmsghdr&) {
    ++out.handed_on;
    return true;
  });
  if (!r) {
    out.error = r.error().message;
  } else {
    out.answer = *r;
  }
  return out;
}

TEST(RtNetlink, AnErrorOrTheEndOfADumpEndsTheRequestWithItsErrno) {
  ifinfomsg link{};
  const auto reply = message(RTM_NEWLINK, 1, &link, sizeof link);
  struct Case {
    const char* name;
    std::vector<char> datagram;
    std::optional<int> answer;
    int handed_on;
  };
  const Case cases[] = {
      {"ack", error_message(0, 1), 0, 0},
      {"EEXIST", error_message(-EEXIST, 1), EEXIST, 0},
      {"the largest errno", error_message(-4095, 1), 4095, 0},
      {"a reply, then the ack", joined({reply, error_message(0, 1)}), 0, 1},
      {"a dump's end", joined({reply, reply, done_message(0, 1)}), 0, 2},
      {"a dump that failed part way", done_message(-EBUSY, 1), EBUSY, 0},
      {"more datagrams follow", joined({reply, reply}), std::nullopt, 2},
      {"a late answer to an earlier request", joined({error_message(-EPERM, 7), reply}),
       std::nullopt, 1},
  };
  for (const Case& c : cases) {
    const Outcome out = read(c.datagram);
    EXPECT_EQ(out.error, "") << c.name;
    EXPECT_EQ(out.answer, c.answer) << c.name;
    EXPECT_EQ(out.handed_on, c.handed_on) << c.name;
  }
}

// Negating INT_MIN overflowed (undefined behaviour, found by test/fuzz/rtnetlink_fuzz.cc): no
// errno is below -4095, so such an answer is malformed.
TEST(RtNetlink, AnErrnoBeyondMaxErrnoIsMalformed) {
  for (int error : {INT_MIN, -4096}) {
    EXPECT_EQ(read(error_message(error, 1)).error, "netlink: malformed error message") << error;
    EXPECT_EQ(read(done_message(error, 1)).error, "netlink: malformed end of dump") << error;
  }
}

TEST(RtNetlink, ACutMessageIsMalformed) {
  auto cut = error_message(-EEXIST, 1);
  cut.resize(cut.size() - 1);
  EXPECT_EQ(read(cut).error, "netlink: malformed datagram");
  ifinfomsg link{};
  auto tail = joined({message(RTM_NEWLINK, 1, &link, sizeof link), std::vector<char>(8, 0)});
  EXPECT_EQ(read(tail).error, "netlink: malformed datagram");
}

}  // namespace
}  // namespace yurthub::net
