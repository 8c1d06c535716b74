// Who is at the other end of a loopback TCP connection: the uid that owns the peer's socket, from
// the kernel's socket table (a NETLINK_SOCK_DIAG lookup of the connection's exact addresses, as
// `ss -e` shows it). SO_PEERCRED answers only for Unix sockets: on TCP it gives uid -1 for every
// peer. Used by the connection limits (one local user cannot take every slot) and the admin
// port (only root, or the hub's own user, may post a join token). Blocking (one netlink round
// trip, bounded by a timeout); thread-safe (a socket per call).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

#include <boost/asio/ip/tcp.hpp>

struct nlmsghdr;  // <linux/netlink.h>

namespace yurthub::net {

// The uid owning the socket at `remote` connected to `local` on this host; nullopt when `remote`
// is not a loopback address or the kernel does not say (the socket is gone, no sock_diag).
std::optional<uid_t> loopback_peer_uid(const boost::asio::ip::tcp::endpoint& local,
                                       const boost::asio::ip::tcp::endpoint& remote);

// One message of the kernel's sock_diag answer to loopback_peer_uid's lookup (its length checked
// against the datagram by net/rtnetlink.h's handle_netlink_datagram): sets `uid` when it is the
// socket with source port `sport` and destination port `dport` (network byte order, as in the
// request). False when it is not an inet_diag_msg. Declared here for test/fuzz/rtnetlink_fuzz.cc.
bool read_sock_diag_message(const nlmsghdr& m, std::uint16_t sport, std::uint16_t dport,
                            std::optional<uid_t>& uid);

}  // namespace yurthub::net
