// The rtnetlink request/answer loop; see rtnetlink.h.
#include "net/rtnetlink.h"

#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace yurthub::net {
namespace {

std::string errno_text(const char* what, int err) {
  return std::string("netlink ") + what + ": " + std::strerror(err);
}

// The kernel's errnos are 1..MAX_ERRNO (4095), reported negated. A value below -4095 is no errno,
// and negating INT_MIN would overflow (found by test/fuzz/rtnetlink_fuzz.cc).
constexpr int kMaxErrno = 4095;

}  // namespace

NetlinkRequest::NetlinkRequest(std::uint16_t type, std::uint16_t flags, const void* fixed,
                               std::size_t size) {
  buf_.assign(NLMSG_SPACE(size), 0);
  auto* h = header();
  h->nlmsg_len = static_cast<std::uint32_t>(NLMSG_LENGTH(size));
  h->nlmsg_type = type;
  h->nlmsg_flags = flags;
  std::memcpy(NLMSG_DATA(h), fixed, size);
}

void NetlinkRequest::add_attr(std::uint16_t type, const void* data, std::size_t size) {
  const std::size_t offset = NLMSG_ALIGN(header()->nlmsg_len);
  buf_.resize(offset + RTA_SPACE(size), 0);
  auto* rta = reinterpret_cast<rtattr*>(buf_.data() + offset);
  rta->rta_type = type;
  rta->rta_len = static_cast<unsigned short>(RTA_LENGTH(size));
  if (size) std::memcpy(RTA_DATA(rta), data, size);
  header()->nlmsg_len = static_cast<std::uint32_t>(offset + RTA_SPACE(size));
}

void NetlinkRequest::add_string(std::uint16_t type, std::string_view value) {
  std::string terminated(value);
  add_attr(type, terminated.c_str(), terminated.size() + 1);
}

std::size_t NetlinkRequest::begin_nested(std::uint16_t type) {
  const std::size_t offset = NLMSG_ALIGN(header()->nlmsg_len);
  add_attr(type, nullptr, 0);
  return offset;
}

void NetlinkRequest::end_nested(std::size_t offset) {
  auto* rta = reinterpret_cast<rtattr*>(buf_.data() + offset);
  rta->rta_len = static_cast<unsigned short>(header()->nlmsg_len - offset);
}

Result<RtNetlink> RtNetlink::open(std::chrono::milliseconds timeout, int protocol) {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
  if (fd < 0) return make_error(errno_text("socket", errno));
  RtNetlink nl(fd);
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) {
    return make_error(errno_text("SO_RCVTIMEO", errno));
  }
  // Errors only echo our request's header, not the whole request (smaller answers).
  const int one = 1;
  (void)::setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
    return make_error(errno_text("bind", errno));
  }
  return nl;
}

RtNetlink::RtNetlink(RtNetlink&& other) noexcept : fd_(other.fd_), seq_(other.seq_) {
  other.fd_ = -1;
}

RtNetlink::~RtNetlink() {
  if (fd_ >= 0) ::close(fd_);
}

Result<int> RtNetlink::transact(NetlinkRequest& request, const OnMessage& on_message) {
  nlmsghdr* h = request.header();
  h->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
  h->nlmsg_seq = ++seq_;
  h->nlmsg_pid = 0;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  const auto& bytes = request.bytes();
  const ssize_t sent = ::sendto(fd_, bytes.data(), h->nlmsg_len, 0,
                                reinterpret_cast<sockaddr*>(&kernel), sizeof kernel);
  if (sent < 0) return make_error(errno_text("send", errno));
  if (static_cast<std::size_t>(sent) != h->nlmsg_len) return make_error("netlink send: short");

  std::vector<char> buf(kMaxDatagram);
  for (int i = 0; i < kMaxDatagramsPerRequest; ++i) {
    sockaddr_nl from{};
    iovec iov{buf.data(), buf.size()};
    msghdr msg{};
    msg.msg_name = &from;
    msg.msg_namelen = sizeof from;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    const ssize_t n = ::recvmsg(fd_, &msg, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return make_error(ErrorCode::Unavailable, "netlink: no answer from the kernel in time");
    }
    if (n < 0) return make_error(errno_text("receive", errno));
    if (msg.msg_flags & MSG_TRUNC) return make_error("netlink: answer truncated");
    if (from.nl_pid != 0) continue;  // only the kernel speaks to this socket
    auto done =
        handle_netlink_datagram(buf.data(), static_cast<std::size_t>(n), h->nlmsg_seq, on_message);
    if (!done) return done.error();
    if (*done) return **done;
  }
  return make_error("netlink: answer too long (more than " +
                    std::to_string(kMaxDatagramsPerRequest) + " datagrams)");
}

Result<std::optional<int>> handle_netlink_datagram(const char* data, std::size_t size,
                                                   std::uint32_t seq,
                                                   const RtNetlink::OnMessage& on_message) {
  // NLMSG_OK and NLMSG_NEXT written out: glibc's NLMSG_OK compares the unsigned nlmsg_len with a
  // signed length, which clang's -Wsign-compare refuses. A tail too short for a whole message
  // ends the loop with bytes left, which is an error below.
  std::size_t left = size;
  for (const char* at = data; left >= sizeof(nlmsghdr);) {
    const auto* m = reinterpret_cast<const nlmsghdr*>(at);
    if (m->nlmsg_len < sizeof(nlmsghdr) || m->nlmsg_len > left) break;
    const std::size_t step = std::min<std::size_t>(NLMSG_ALIGN(m->nlmsg_len), left);
    at += step;
    left -= step;
    if (m->nlmsg_seq != seq) continue;  // a late answer to an earlier, timed-out request
    if (m->nlmsg_type == NLMSG_ERROR) {
      if (m->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) {
        return make_error("netlink: short error message");
      }
      const auto* err = static_cast<const nlmsgerr*>(NLMSG_DATA(m));
      if (err->error < -kMaxErrno) return make_error("netlink: malformed error message");
      return std::optional<int>(err->error < 0 ? -err->error : 0);
    }
    if (m->nlmsg_type == NLMSG_DONE) {
      // A dump's end may carry an errno (int) when it failed part way.
      int status = 0;
      if (m->nlmsg_len >= NLMSG_LENGTH(sizeof(int))) {
        std::memcpy(&status, NLMSG_DATA(m), sizeof status);
      }
      if (status < -kMaxErrno) return make_error("netlink: malformed end of dump");
      return std::optional<int>(status < 0 ? -status : 0);
    }
    if (m->nlmsg_type == NLMSG_NOOP || m->nlmsg_type == NLMSG_OVERRUN) continue;
    if (!on_message(*m)) return make_error("netlink: malformed answer");
  }
  if (left > 0) return make_error("netlink: malformed datagram");
  return std::optional<int>();
}

}  // namespace yurthub::net
