// TcpRelay: a loopback TCP forwarder that integration tests put between the hub and the fake
// apiserver to partition the network at run time while both processes keep running (a SIGSTOP of
// the apiserver would freeze the cloud too). It relays bytes untouched, so the hub's TLS to the
// apiserver still verifies (the apiserver's certificate names 127.0.0.1, as the relay does).
//
// Cluster (ClusterOptions::through_relay) owns one; tcp_relay_test.cc tests it alone.
// Threading: relaying runs on the relay's own thread (poll() over non-blocking sockets, 64 KiB
// buffered per direction per connection); the public methods may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace yurthub::test {

class TcpRelay {
 public:
  // Listens on 127.0.0.1 on an ephemeral port, relaying each accepted connection to
  // 127.0.0.1:`target_port`. The port stays the relay's for its whole life, across cut() and
  // heal(). A target that refuses (a stopped apiserver) gets its client's connection reset.
  // Fails the current test (port() is then 0) if it cannot listen.
  explicit TcpRelay(int target_port);
  // Resets every relayed connection and stops the thread.
  ~TcpRelay();
  TcpRelay(const TcpRelay&) = delete;
  TcpRelay& operator=(const TcpRelay&) = delete;

  int port() const { return port_; }
  int target_port() const { return target_port_; }

  // A link loss. On return, every relayed connection has been reset on both sides (RST, so the
  // hub sees ECONNRESET as from a broken link, never a clean end of a watch) and new connections
  // are refused (the port has no listener; it stays reserved for heal()).
  void cut();
  // A silent partition. On return, no byte passes in either direction on the held connections
  // (what is in flight stays buffered), and new connections complete their handshake in the
  // kernel's backlog but are neither accepted nor relayed; once the backlog is full, connects
  // hang. heal() relays all of them again, in order.
  void blackhole();
  // Relays again: after cut(), new connections only (the cut ones are gone); after blackhole(),
  // the held ones too. A no-op when relaying.
  void heal();

  // Client connections being relayed now (including one whose connect to the target is under
  // way, and ones held by blackhole()).
  int connections() const { return connections_.load(); }
  // Client connections accepted since the start.
  std::int64_t accepted() const { return accepted_.load(); }

 private:
  enum class Mode { Relaying, Blackholed, Cut, Stopped };
  // Hands `mode` to the relay thread and waits (bounded) until it has applied it.
  void set_mode(Mode mode);
  // The relay thread: owns `listener` and every relayed connection.
  void run(int listener);

  int target_port_;
  int port_ = 0;
  int reservation_fd_ = -1;  // bound, never listening: keeps the port ours while cut
  int wake_fd_ = -1;         // eventfd: a new mode was requested
  std::atomic<int> connections_{0};
  std::atomic<std::int64_t> accepted_{0};

  std::mutex mutex_;  // guards the four fields below: the mode hand-off
  std::condition_variable applied_cv_;
  Mode requested_ = Mode::Relaying;
  std::uint64_t requested_seq_ = 0;
  std::uint64_t applied_seq_ = 0;
  bool applied_ok_ = true;  // false: the relay thread could not listen again

  std::thread thread_;
};

}  // namespace yurthub::test
