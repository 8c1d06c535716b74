// Process control for integration tests; see process.h.
#include "test/integration/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

extern char** environ;

namespace yurthub::test {
namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

long status_field_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

}  // namespace

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::unique_ptr<Process> Process::start(const std::vector<std::string>& argv, std::string log_path,
                                        const std::vector<int>& inherit) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  for (std::size_t i = 0; i < inherit.size(); ++i) {
    posix_spawn_file_actions_adddup2(&actions, inherit[i], 3 + static_cast<int>(i));
  }
  pid_t pid = 0;
  auto args = c_argv(argv);
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ADD_FAILURE() << "cannot start " << argv[0] << ": " << strerror(rc);
    return nullptr;
  }
  return std::unique_ptr<Process>(new Process(pid, std::move(log_path)));
}

Process::~Process() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

std::string Process::log() const { return read_file(log_path_); }

std::optional<std::string> Process::wait_for_log(const std::string& regex,
                                                 std::chrono::milliseconds timeout) const {
  const std::regex pattern(regex);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  do {
    std::smatch match;
    const std::string text = log();
    if (std::regex_search(text, match, pattern))
      return match.size() > 1 ? match[1].str() : match[0].str();
    if (::kill(pid_, 0) != 0) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  return std::nullopt;
}

void Process::signal(int signo) const {
  if (!reaped_) ::kill(pid_, signo);  // a reaped pid may belong to another process by now
}

std::optional<int> Process::wait_exit(std::chrono::milliseconds timeout) {
  if (reaped_) return status_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  do {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      status_ = status;
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (std::chrono::steady_clock::now() < deadline);
  return std::nullopt;
}

bool Process::running() {
  if (reaped_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    reaped_ = true;
    status_ = status;
  }
  return !reaped_;
}

long Process::peak_rss_kib() const { return status_field_kib(pid_, "VmHWM"); }
long Process::current_rss_kib() const { return status_field_kib(pid_, "VmRSS"); }

std::vector<std::string> as_user(uid_t uid, std::vector<std::string> argv) {
  if (uid == 0) return argv;
  std::vector<std::string> out = {"/usr/bin/setpriv", "--reuid=" + std::to_string(uid),
                                  "--regid=" + std::to_string(uid), "--clear-groups"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const std::string& input) {
  ::signal(SIGPIPE, SIG_IGN);  // a child that exits before reading its stdin must not kill us
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) || pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC))
    return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  pid_t pid = 0;
  auto args = c_argv(argv);
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  CommandResult result;
  if (rc != 0) {
    result.err = std::string("cannot start ") + argv[0] + ": " + strerror(rc);
    ::close(in_pipe[1]);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return result;
  }
  std::size_t written = 0;
  auto close_stdin = [&] {
    ::close(in_pipe[1]);
    in_pipe[1] = -1;
  };
  if (input.empty()) close_stdin();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool killed = false;
  int open_fds = 2;
  while (open_fds > 0) {
    pollfd fds[3] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}, {in_pipe[1], POLLOUT, 0}};
    const int nfds = in_pipe[1] >= 0 ? 3 : 2;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 && !killed) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
    ::poll(fds, nfds, killed ? 100 : static_cast<int>(std::min<long>(left.count(), 100)));
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[65536];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buf, static_cast<std::size_t>(n));
      } else {
        ::close(fds[i].fd);
        (i == 0 ? out_pipe[0] : err_pipe[0]) = -1;
        --open_fds;
      }
    }
    if (nfds == 3 && (fds[2].revents & (POLLOUT | POLLERR))) {
      const ssize_t n = ::write(in_pipe[1], input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if (n < 0 || written == input.size()) close_stdin();
    }
  }
  if (in_pipe[1] >= 0) ::close(in_pipe[1]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code =
      killed ? -1 : (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  return result;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "yurthub-test-XXXXXX").string();
  path_ = ::mkdtemp(pattern.data()) ? pattern : "";
  EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty() && !::getenv("YURTHUB_KEEP_TEST_DIRS")) std::filesystem::remove_all(path_, ec);
}

}  // namespace yurthub::test
