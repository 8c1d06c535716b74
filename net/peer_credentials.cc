// The uid of a loopback TCP peer by sock_diag; see peer_credentials.h.
#include "net/peer_credentials.h"

#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>

#include <cstring>

#include "net/rtnetlink.h"

namespace yurthub::net {
namespace {

// Copies an endpoint's address into sock_diag's 4 x 32-bit address field (network order).
void put_address(const boost::asio::ip::tcp::endpoint& e, std::uint32_t out[4]) {
  std::memset(out, 0, 4 * sizeof(std::uint32_t));
  const auto address = e.address();
  if (address.is_v4()) {
    const auto bytes = address.to_v4().to_bytes();
    std::memcpy(out, bytes.data(), bytes.size());
  } else {
    const auto bytes = address.to_v6().to_bytes();
    std::memcpy(out, bytes.data(), bytes.size());
  }
}

}  // namespace

bool read_sock_diag_message(const nlmsghdr& m, std::uint16_t sport, std::uint16_t dport,
                            std::optional<uid_t>& uid) {
  if (m.nlmsg_type != SOCK_DIAG_BY_FAMILY || m.nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg)))
    return false;
  inet_diag_msg msg{};
  std::memcpy(&msg, NLMSG_DATA(&m), sizeof msg);
  if (msg.id.idiag_sport == sport && msg.id.idiag_dport == dport) uid = msg.idiag_uid;
  return true;
}

std::optional<uid_t> loopback_peer_uid(const boost::asio::ip::tcp::endpoint& local,
                                       const boost::asio::ip::tcp::endpoint& remote) {
  if (!remote.address().is_loopback() || local.address().is_v4() != remote.address().is_v4())
    return std::nullopt;
  auto nl = RtNetlink::open(std::chrono::milliseconds(500), NETLINK_SOCK_DIAG);
  if (!nl) return std::nullopt;
  // The peer's socket: its source is our remote end, its destination our local end.
  inet_diag_req_v2 req{};
  req.sdiag_family = static_cast<std::uint8_t>(remote.address().is_v4() ? AF_INET : AF_INET6);
  req.sdiag_protocol = IPPROTO_TCP;
  req.idiag_states = ~0u;
  req.id.idiag_sport = htons(remote.port());
  req.id.idiag_dport = htons(local.port());
  put_address(remote, req.id.idiag_src);
  put_address(local, req.id.idiag_dst);
  req.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  NetlinkRequest request(SOCK_DIAG_BY_FAMILY, 0, &req, sizeof req);
  std::optional<uid_t> uid;
  auto answer = nl->transact(request, [&](const nlmsghdr& m) {
    return read_sock_diag_message(m, req.id.idiag_sport, req.id.idiag_dport, uid);
  });
  if (!answer || *answer != 0) return std::nullopt;
  return uid;
}

}  // namespace yurthub::net
