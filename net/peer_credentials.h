// Who is at the other end of a loopback TCP connection: the uid that owns the peer's socket, from
// the kernel's socket table (a NETLINK_SOCK_DIAG lookup of the connection's exact addresses, as
// `ss -e` shows it). SO_PEERCRED answers only for Unix sockets: on TCP it gives uid -1 for every
// peer. Used by the connection limits (one local user cannot take every slot) and the admin
// port (only root, or the hub's own user, may post a join token). Blocking (one netlink round
// trip, bounded by a timeout); thread-safe (a socket per call).
#pragma once

#include <sys/types.h>

#include <optional>

#include <boost/asio/ip/tcp.hpp>

namespace yurthub::net {

// The uid owning the socket at `remote` connected to `local` on this host; nullopt when `remote`
// is not a loopback address or the kernel does not say (the socket is gone, no sock_diag).
std::optional<uid_t> loopback_peer_uid(const boost::asio::ip::tcp::endpoint& local,
                                       const boost::asio::ip::tcp::endpoint& remote);

}  // namespace yurthub::net
