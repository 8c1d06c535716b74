// RtNetlink: a minimal netlink client over a raw socket (no libnl), NETLINK_ROUTE unless told
// otherwise: build one request, send it, and read the kernel's answers for that request's
// sequence number until its ACK, NLMSG_DONE or NLMSG_ERROR. Every receive is bounded in size (one
// datagram of at most kMaxDatagram bytes, MSG_TRUNC is an error), in time (SO_RCVTIMEO) and in
// count. Used by net/dummy_interface.cc (rtnetlink) and net/peer_credentials.cc (sock_diag);
// blocking, one caller at a time (not thread-safe).
#pragma once

#include <linux/netlink.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace yurthub::net {

// One request message under construction: header, fixed part, then attributes (nested allowed).
class NetlinkRequest {
 public:
  // `fixed` is the message's fixed part (ifinfomsg, ifaddrmsg), copied after the header.
  NetlinkRequest(std::uint16_t type, std::uint16_t flags, const void* fixed, std::size_t size);

  void add_attr(std::uint16_t type, const void* data, std::size_t size);
  void add_string(std::uint16_t type,
                  std::string_view value);  // NUL-terminated, as the kernel wants
  // Opens a nested attribute; returns its offset for end_nested().
  std::size_t begin_nested(std::uint16_t type);
  void end_nested(std::size_t offset);

  nlmsghdr* header() { return reinterpret_cast<nlmsghdr*>(buf_.data()); }
  const std::vector<char>& bytes() const { return buf_; }

 private:
  std::vector<char> buf_;
};

class RtNetlink {
 public:
  static constexpr std::size_t kMaxDatagram = 64 * 1024;
  static constexpr int kMaxDatagramsPerRequest = 4096;

  // Opens and binds a socket of netlink `protocol`; `timeout` bounds each receive.
  static Result<RtNetlink> open(std::chrono::milliseconds timeout, int protocol = NETLINK_ROUTE);
  RtNetlink(RtNetlink&& other) noexcept;
  RtNetlink& operator=(RtNetlink&&) = delete;
  ~RtNetlink();

  // Each reply message (not ACK/DONE/ERROR) of this request; NLMSG_OK has checked its length
  // against the datagram. Return false to fail the request as malformed.
  using OnMessage = std::function<bool(const nlmsghdr&)>;

  // Sends `request` (NLM_F_REQUEST|NLM_F_ACK added, sequence number set) and reads until its end:
  // an ACK, NLMSG_DONE for a dump, or NLMSG_ERROR. The value is the kernel's answer: 0, or the
  // positive errno it reported (ENODEV, EEXIST, EPERM...). An Error is a local failure: the
  // socket, no answer within the timeout, a truncated or malformed answer.
  Result<int> transact(NetlinkRequest& request, const OnMessage& on_message);

 private:
  explicit RtNetlink(int fd) : fd_(fd) {}

  int fd_ = -1;
  std::uint32_t seq_ = 0;
};

// Reads one datagram of the kernel's answer to the request numbered `seq` (transact() calls it for
// each datagram it receives; test/fuzz/rtnetlink_fuzz.cc feeds it arbitrary bytes): each message
// of that request that is not ACK/DONE/ERROR goes to `on_message`. The value is the kernel's answer
// once this request ended (0 or a positive errno, as transact()), else nullopt (more datagrams
// follow). An Error is a malformed datagram or a message `on_message` refused.
// REQUIRES: `data` is aligned for nlmsghdr (4 bytes), as a receive buffer is.
Result<std::optional<int>> handle_netlink_datagram(const char* data, std::size_t size,
                                                   std::uint32_t seq,
                                                   const RtNetlink::OnMessage& on_message);

}  // namespace yurthub::net
