// Running a test body in a fresh network namespace, so tests that create, break and delete
// network interfaces never touch the host's: run_in_new_netns() forks, the child unshares its
// network namespace, brings its loopback up, runs the body and sends back what failed through a
// pipe. Header-only; used by test/net/dummy_interface_test.cc and
// test/hub/dummy_interface_keeper_test.cc.
#pragma once

#include <linux/capability.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>

namespace yurthub::test {

// Collects failures in the child; one line each.
struct ChildChecks {
  std::string failures;
  void expect(bool ok, const std::string& what) {
    if (!ok) failures += what + "\n";
  }
};

struct NetnsOutcome {
  std::string skip_reason;  // non-empty: the namespace could not be made (no CAP_SYS_ADMIN)
  std::string failures;     // what the body reported, or how the child died
};

inline constexpr int kNetnsUnavailable = 77;

inline int ioctl_socket() { return ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0); }

// The interface's flags, or -1 if it does not exist.
inline int interface_flags(const std::string& name) {
  const int fd = ioctl_socket();
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  const int rc = ::ioctl(fd, SIOCGIFFLAGS, &ifr);
  ::close(fd);
  return rc == 0 ? ifr.ifr_flags : -1;
}

inline bool set_interface_up(const std::string& name, bool up) {
  const int flags = interface_flags(name);
  if (flags < 0) return false;
  const int fd = ioctl_socket();
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  ifr.ifr_flags = static_cast<short>(up ? (flags | IFF_UP) : (flags & ~IFF_UP));
  const int rc = ::ioctl(fd, SIOCSIFFLAGS, &ifr);
  ::close(fd);
  return rc == 0;
}

// Drops CAP_NET_ADMIN from the calling process's effective set (a hub run without it).
inline bool drop_net_admin() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  data[CAP_NET_ADMIN / 32].effective &= ~(1u << (CAP_NET_ADMIN % 32));
  return ::syscall(SYS_capset, &header, data) == 0;
}

// Runs `body` in a child process inside a new network namespace (loopback up).
inline NetnsOutcome run_in_new_netns(const std::function<void(ChildChecks&)>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return {"", std::string("pipe: ") + std::strerror(errno)};
  const pid_t pid = ::fork();
  if (pid < 0) return {"", std::string("fork: ") + std::strerror(errno)};
  if (pid == 0) {
    ::close(fds[0]);
    std::string out;
    int code = 0;
    if (::unshare(CLONE_NEWNET) != 0) {
      out = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
      code = kNetnsUnavailable;
    } else {
      ChildChecks checks;
      checks.expect(set_interface_up("lo", true), "cannot set lo up");
      body(checks);
      out = checks.failures;
    }
    for (std::size_t off = 0; off < out.size();) {
      const ssize_t n = ::write(fds[1], out.data() + off, out.size() - off);
      if (n <= 0) break;
      off += static_cast<std::size_t>(n);
    }
    ::_exit(code);
  }
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == kNetnsUnavailable) return {text, ""};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    text += "child died (status " + std::to_string(status) + ")\n";
  }
  return {"", text};
}

}  // namespace yurthub::test
