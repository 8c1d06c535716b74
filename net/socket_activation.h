// Listening sockets handed over by systemd's socket activation (the protocol of sd_listen_fds(3):
// when LISTEN_PID names this process, LISTEN_FDS sockets start at descriptor 3). A socket unit
// holds the hub's ports from early boot and across its restarts, so no other local user can bind
// 10261 while the hub is down and take kubelet's requests (docs/operations.md, "Socket
// activation"). The hub takes a socket where it would bind the same address and port, and binds
// itself the ones it was not given (or everything, when started without systemd). libsystemd is
// not needed for three environment variables. Used by Hub at start, on the main thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/asio/ip/tcp.hpp>

namespace yurthub::net {

class InheritedListeners {
 public:
  // Reads LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES, keeps the listening TCP sockets among the
  // descriptors (close-on-exec from now on), and removes the variables, so a child process never
  // takes them for its own. Descriptors that are not listening TCP sockets are closed, with a
  // warning.
  static InheritedListeners from_environment();
  InheritedListeners() = default;
  InheritedListeners(const InheritedListeners&) = delete;
  InheritedListeners& operator=(const InheritedListeners&) = delete;
  InheritedListeners(InheritedListeners&& other) noexcept : sockets_(std::move(other.sockets_)) {}
  // Closes the sockets never taken, with a warning naming them.
  ~InheritedListeners();

  // The inherited socket bound to exactly `endpoint` (a port of 0 never matches), handed over
  // (the caller owns the descriptor); nullopt when there is none.
  std::optional<int> take(const boost::asio::ip::tcp::endpoint& endpoint);
  // Whether take(endpoint) would hand one over.
  bool has(const boost::asio::ip::tcp::endpoint& endpoint) const;
  std::size_t size() const { return sockets_.size(); }

 private:
  struct Socket {
    int fd;
    boost::asio::ip::tcp::endpoint endpoint;
    std::string name;  // from LISTEN_FDNAMES, for logs
  };
  std::vector<Socket> sockets_;
};

}  // namespace yurthub::net
