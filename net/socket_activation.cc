// Sockets from systemd's socket activation; see socket_activation.h.
#include "net/socket_activation.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>

#include "base/log.h"

namespace yurthub::net {
namespace {

constexpr int kFirstFd = 3;  // SD_LISTEN_FDS_START
constexpr int kMaxFds = 64;  // far more than the hub's four ports

std::optional<long> number(const char* text) {
  if (text == nullptr) return std::nullopt;
  long value = 0;
  const char* end = text + std::strlen(text);
  auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// The endpoint a listening TCP socket is bound to; nullopt for anything else.
std::optional<boost::asio::ip::tcp::endpoint> listening_tcp(int fd) {
  int type = 0, listening = 0;
  socklen_t length = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_STREAM)
    return std::nullopt;
  length = sizeof listening;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0 || !listening)
    return std::nullopt;
  sockaddr_storage address{};
  length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return std::nullopt;
  boost::asio::ip::tcp::endpoint endpoint;
  if (address.ss_family != AF_INET && address.ss_family != AF_INET6) return std::nullopt;
  if (length > endpoint.capacity()) return std::nullopt;
  std::memcpy(endpoint.data(), &address, length);
  endpoint.resize(length);
  return endpoint;
}

std::string describe(const boost::asio::ip::tcp::endpoint& e) {
  return e.address().to_string() + ":" + std::to_string(e.port());
}

}  // namespace

InheritedListeners InheritedListeners::from_environment() {
  InheritedListeners out;
  const auto pid = number(std::getenv("LISTEN_PID"));
  const auto count = number(std::getenv("LISTEN_FDS"));
  const char* names_env = std::getenv("LISTEN_FDNAMES");
  const std::string names = names_env != nullptr ? names_env : "";
  ::unsetenv("LISTEN_PID");
  ::unsetenv("LISTEN_FDS");
  ::unsetenv("LISTEN_FDNAMES");
  if (!pid || !count || *pid != static_cast<long>(::getpid()) || *count <= 0) return out;
  if (*count > kMaxFds) {
    YH_LOG(Error) << "socket activation: LISTEN_FDS=" << *count << " is more than " << kMaxFds
                  << " sockets; none taken";
    return out;
  }
  std::size_t name_start = 0;
  for (int fd = kFirstFd; fd < kFirstFd + *count; ++fd) {
    const auto name_end = names.find(':', name_start);
    const std::string name = names.substr(name_start, name_end - name_start);
    name_start = name_end == std::string::npos ? names.size() : name_end + 1;
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags < 0) continue;  // not open
    ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    auto endpoint = listening_tcp(fd);
    if (!endpoint) {
      YH_LOG(Warning) << "socket activation: descriptor " << fd << " (" << name
                      << ") is not a listening TCP socket; closed";
      ::close(fd);
      continue;
    }
    out.sockets_.push_back(Socket{fd, *endpoint, name});
  }
  return out;
}

InheritedListeners::~InheritedListeners() {
  for (const Socket& s : sockets_) {
    YH_LOG(Warning) << "socket activation: no listener of the hub is on " << describe(s.endpoint)
                    << " (" << s.name << "); closed";
    ::close(s.fd);
  }
}

std::optional<int> InheritedListeners::take(const boost::asio::ip::tcp::endpoint& endpoint) {
  if (endpoint.port() == 0) return std::nullopt;
  for (auto it = sockets_.begin(); it != sockets_.end(); ++it) {
    if (it->endpoint == endpoint) {
      const int fd = it->fd;
      sockets_.erase(it);
      return fd;
    }
  }
  return std::nullopt;
}

bool InheritedListeners::has(const boost::asio::ip::tcp::endpoint& endpoint) const {
  if (endpoint.port() == 0) return false;
  for (const auto& socket : sockets_) {
    if (socket.endpoint == endpoint) return true;
  }
  return false;
}

}  // namespace yurthub::net
