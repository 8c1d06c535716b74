// A loopback TCP forwarder for partition tests; see tcp_relay.h.
//
// One thread polls an eventfd (mode changes), the listener and both sockets of every link. A link
// reads a side only while its buffer towards the other side has room, so memory per link is
// bounded and a slow reader slows its writer (TCP back-pressure end to end). The port is kept by
// a socket that is bound but never listens (SO_REUSEPORT on both), so cut() can close the
// listener, which makes connects refused at once, and heal() can listen on the same port again.
#include "test/integration/tcp_relay.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

namespace yurthub::test {
namespace {

constexpr std::size_t kBufferBytes = 64 * 1024;
constexpr std::size_t kMaxLinks = 1024;  // more connections than this are reset at accept
constexpr auto kApplyTimeout = std::chrono::seconds(10);

// Bytes read from one socket and not yet written to the other.
struct Pipe {
  std::array<char, kBufferBytes> bytes;
  std::size_t begin = 0;
  std::size_t end = 0;
  bool eof = false;   // the source sent FIN
  bool shut = false;  // and the FIN was passed on to the destination, after the bytes
  bool empty() const { return begin == end; }
  bool can_read() const { return !eof && end < bytes.size(); }
};

// One client connection and its connection to the target.
struct Link {
  int client = -1;
  int upstream = -1;
  bool connecting = true;  // the connect to the target is under way
  // poll() reports POLLHUP even when not asked: a hung-up socket we have nothing to do with yet
  // is left out of the poll set rather than spinning on it.
  bool client_hup = false;
  bool upstream_hup = false;
  bool done = false;  // both sockets closed; dropped after this round
  Pipe up;            // client -> target
  Pipe down;          // target -> client
};

sockaddr_in loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

// A socket bound to 127.0.0.1:`port` with SO_REUSEPORT, so the reservation and the listener can
// share the port (both ours: the same user); nobody else can bind it.
int bound_socket(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  sockaddr_in addr = loopback(port);
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

int open_listener(int port) {
  const int fd = bound_socket(port);
  if (fd >= 0 && ::listen(fd, 64) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Closes with RST (SO_LINGER 0): the peer's next read or write fails with ECONNRESET, as after
// a link loss, instead of reading a clean end of stream.
void reset_close(int fd) {
  if (fd < 0) return;
  const linger hard{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  ::close(fd);
}

void no_delay(int fd) {
  const int one = 1;  // a relay must not add Nagle's delay to small TLS records
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// A non-blocking connect to the target; -1 if it failed at once (the target is not listening).
int connect_upstream(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  no_delay(fd);
  sockaddr_in addr = loopback(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void reset_link(Link& link) {
  reset_close(link.client);
  reset_close(link.upstream);
  link.done = true;
}

bool would_block() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

// Moves what it can from `src` through `pipe` to `dst`; false on a socket error.
bool pump(Pipe& pipe, int src, int dst, short src_events) {
  if (pipe.can_read() && (src_events & (POLLIN | POLLHUP))) {
    const ssize_t n = ::recv(src, pipe.bytes.data() + pipe.end, pipe.bytes.size() - pipe.end, 0);
    if (n > 0) pipe.end += static_cast<std::size_t>(n);
    if (n == 0) pipe.eof = true;
    if (n < 0 && !would_block()) return false;
  }
  if (!pipe.empty()) {  // try at once: the destination is usually writable
    const ssize_t n =
        ::send(dst, pipe.bytes.data() + pipe.begin, pipe.end - pipe.begin, MSG_NOSIGNAL);
    if (n > 0) pipe.begin += static_cast<std::size_t>(n);
    if (n < 0 && !would_block()) return false;
    if (pipe.empty()) pipe.begin = pipe.end = 0;
  }
  if (pipe.eof && pipe.empty() && !pipe.shut) {
    ::shutdown(dst, SHUT_WR);  // a half-close passes through (a client may send FIN first)
    pipe.shut = true;
  }
  return true;
}

void service(Link& link, short client_events, short upstream_events) {
  if (link.connecting) {
    if (client_events & (POLLERR | POLLHUP)) return reset_link(link);
    if (!(upstream_events & (POLLOUT | POLLERR | POLLHUP))) return;
    int error = 0;
    socklen_t size = sizeof error;
    ::getsockopt(link.upstream, SOL_SOCKET, SO_ERROR, &error, &size);
    if (error != 0) return reset_link(link);  // the target refused: the client sees a reset
    link.connecting = false;
    return;
  }
  if ((client_events | upstream_events) & POLLERR) return reset_link(link);  // a peer's RST
  link.client_hup = link.client_hup || (client_events & POLLHUP);
  link.upstream_hup = link.upstream_hup || (upstream_events & POLLHUP);
  if (!pump(link.up, link.client, link.upstream, client_events) ||
      !pump(link.down, link.upstream, link.client, upstream_events)) {
    return reset_link(link);
  }
  if (link.up.shut && link.down.shut) {  // both sides ended cleanly
    ::close(link.client);
    ::close(link.upstream);
    link.done = true;
  }
}

pollfd poll_entry(int fd, short events, bool hup) {
  return pollfd{events == 0 && hup ? -1 : fd, events, 0};
}

// The poll set: [0] the wake eventfd, [1] the listener, then client and target of each link.
// Only the eventfd while blackholed: nothing else may move.
void build_poll_set(std::vector<pollfd>& fds, int wake_fd, int listener, bool relaying,
                    const std::vector<std::unique_ptr<Link>>& links) {
  fds.clear();
  fds.push_back({wake_fd, POLLIN, 0});
  fds.push_back({relaying ? listener : -1, POLLIN, 0});
  for (const auto& link : links) {
    if (!relaying) {
      fds.push_back({-1, 0, 0});
      fds.push_back({-1, 0, 0});
    } else if (link->connecting) {
      fds.push_back({link->client, 0, 0});
      fds.push_back({link->upstream, POLLOUT, 0});
    } else {
      const short client = static_cast<short>((link->up.can_read() ? POLLIN : 0) |
                                              (link->down.empty() ? 0 : POLLOUT));
      const short upstream = static_cast<short>((link->down.can_read() ? POLLIN : 0) |
                                                (link->up.empty() ? 0 : POLLOUT));
      fds.push_back(poll_entry(link->client, client, link->client_hup));
      fds.push_back(poll_entry(link->upstream, upstream, link->upstream_hup));
    }
  }
}

// Takes every pending connection and starts its connect to the target.
void accept_all(int listener, int target_port, std::vector<std::unique_ptr<Link>>& links,
                std::atomic<std::int64_t>& accepted) {
  while (true) {
    const int client = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client < 0) return;  // EAGAIN: all taken
    ++accepted;
    no_delay(client);
    const int upstream = links.size() < kMaxLinks ? connect_upstream(target_port) : -1;
    if (upstream < 0) {
      reset_close(client);
      continue;
    }
    auto link = std::make_unique<Link>();
    link->client = client;
    link->upstream = upstream;
    links.push_back(std::move(link));
  }
}

}  // namespace

TcpRelay::TcpRelay(int target_port) : target_port_(target_port) {
  reservation_fd_ = bound_socket(0);
  sockaddr_in addr{};
  socklen_t size = sizeof addr;
  if (reservation_fd_ >= 0 &&
      ::getsockname(reservation_fd_, reinterpret_cast<sockaddr*>(&addr), &size) == 0) {
    port_ = ntohs(addr.sin_port);
  }
  const int listener = port_ != 0 ? open_listener(port_) : -1;
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (listener < 0 || wake_fd_ < 0) {
    ADD_FAILURE() << "TcpRelay: cannot listen on 127.0.0.1: " << std::strerror(errno);
    if (listener >= 0) ::close(listener);
    port_ = 0;
    return;
  }
  thread_ = std::thread([this, listener] { run(listener); });
}

TcpRelay::~TcpRelay() {
  if (thread_.joinable()) {
    set_mode(Mode::Stopped);
    thread_.join();
  }
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (reservation_fd_ >= 0) ::close(reservation_fd_);
}

void TcpRelay::cut() { set_mode(Mode::Cut); }
void TcpRelay::blackhole() { set_mode(Mode::Blackholed); }
void TcpRelay::heal() { set_mode(Mode::Relaying); }

void TcpRelay::set_mode(Mode mode) {
  if (!thread_.joinable()) return;  // the constructor failed the test already
  std::unique_lock lock(mutex_);
  requested_ = mode;
  const std::uint64_t seq = ++requested_seq_;
  const std::uint64_t one = 1;
  if (::write(wake_fd_, &one, sizeof one) < 0) {
    ADD_FAILURE() << "TcpRelay: cannot wake the relay thread: " << std::strerror(errno);
  }
  if (!applied_cv_.wait_for(lock, kApplyTimeout, [&] { return applied_seq_ >= seq; })) {
    ADD_FAILURE() << "TcpRelay: the relay thread did not apply the new mode";
  } else if (!applied_ok_) {
    ADD_FAILURE() << "TcpRelay: cannot listen on 127.0.0.1:" << port_ << " again";
  }
}

void TcpRelay::run(int listener) {
  std::vector<std::unique_ptr<Link>> links;
  std::vector<pollfd> fds;
  Mode mode = Mode::Relaying;
  while (true) {
    {
      std::lock_guard lock(mutex_);
      if (applied_seq_ != requested_seq_) {
        mode = requested_;
        if (mode == Mode::Cut || mode == Mode::Stopped) {
          for (auto& link : links) reset_link(*link);
          links.clear();
          if (listener >= 0) ::close(listener);  // connects are refused from now on
          listener = -1;
        } else if (listener < 0) {
          listener = open_listener(port_);
        }
        applied_ok_ = mode == Mode::Cut || mode == Mode::Stopped || listener >= 0;
        applied_seq_ = requested_seq_;
        connections_ = static_cast<int>(links.size());
        applied_cv_.notify_all();
      }
    }
    if (mode == Mode::Stopped) return;
    build_poll_set(fds, wake_fd_, listener, mode == Mode::Relaying, links);
    // No timeout: every change of mode, and the destructor, writes the eventfd.
    if (::poll(fds.data(), fds.size(), -1) < 0) continue;  // EINTR
    if (fds[0].revents & POLLIN) {
      std::uint64_t count = 0;
      if (::read(wake_fd_, &count, sizeof count) < 0) continue;
    }
    for (std::size_t i = 0; i < links.size(); ++i) {
      service(*links[i], fds[2 + 2 * i].revents, fds[3 + 2 * i].revents);
    }
    std::erase_if(links, [](const auto& link) { return link->done; });
    if (fds[1].revents & POLLIN) accept_all(listener, target_port_, links, accepted_);
    connections_ = static_cast<int>(links.size());
  }
}

}  // namespace yurthub::test
