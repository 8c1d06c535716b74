// ConnectionLimits: the bounds on the proxy listeners' client connections: all of them
// (--max-connections), and those of one peer (--max-connections-per-peer): a local user by its
// uid (net/peer_credentials.h on loopback, so one user's program cannot take every slot from
// kubelet), a remote address otherwise. A session holds a Slot for its connection's lifetime.
// Thread-safe: sessions start and end on every worker.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "net/tcp_socket.h"

namespace yurthub::hub {

class ConnectionLimits {
 public:
  ConnectionLimits(int max_total, int max_per_peer)
      : max_total_(max_total), max_per_peer_(max_per_peer) {}

  // Released when destroyed.
  class Slot {
   public:
    Slot(ConnectionLimits* limits, std::string peer) : limits_(limits), peer_(std::move(peer)) {}
    Slot(Slot&& other) noexcept : limits_(other.limits_), peer_(std::move(other.peer_)) {
      other.limits_ = nullptr;
    }
    Slot& operator=(Slot&&) = delete;
    ~Slot();
    const std::string& peer() const { return peer_; }

   private:
    ConnectionLimits* limits_;
    std::string peer_;
  };

  // A slot for one more connection of `peer`, or nullopt when a bound is reached.
  std::optional<Slot> acquire(const std::string& peer);
  int open() const;

  // "uid:<n>" for a loopback peer whose credentials the kernel gives, else "ip:<address>".
  static std::string peer_of(net::TcpSocket& socket);
  // Whether `peer` (as peer_of names it) runs as root or as the hub's own user on this node:
  // kubelet's side of the node, whose offline writes have a share of the journal kept for them.
  static bool is_privileged(const std::string& peer);

 private:
  void release(const std::string& peer);

  const int max_total_;
  const int max_per_peer_;
  mutable std::mutex mutex_;  // guards total_ and per_peer_
  int total_ = 0;
  std::unordered_map<std::string, int> per_peer_;
};

}  // namespace yurthub::hub
