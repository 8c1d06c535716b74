// Process control for integration tests: start a real program with its output captured in a log
// file, wait for a log line, signal it, measure its peak memory; and run a command to completion
// with a timeout, capturing stdout and stderr. POSIX only (posix_spawn, waitpid).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace yurthub::test {

class Process {
 public:
  // Starts argv[0] with argv; stdout and stderr go to `log_path`. `inherit`: descriptors the
  // process gets as 3, 4, ... (numbered above them: each is dup2'ed in order). Aborts the test on
  // failure.
  static std::unique_ptr<Process> start(const std::vector<std::string>& argv, std::string log_path,
                                        const std::vector<int>& inherit = {});
  ~Process();  // kills (SIGKILL) and reaps the process if still running

  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }
  std::string log() const;

  // Waits until the log has a match of `regex`; returns the first capture group (or the whole
  // match). nullopt on timeout or if the process exits first.
  std::optional<std::string> wait_for_log(const std::string& regex,
                                          std::chrono::milliseconds timeout) const;
  void signal(int signo) const;
  // Waits for exit; returns the wait status (at once if already reaped) or nullopt on timeout.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout);
  bool running();
  // Peak resident set size (VmHWM) in KiB, or -1.
  long peak_rss_kib() const;
  long current_rss_kib() const;

 private:
  Process(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  pid_t pid_;
  std::string log_path_;
  bool reaped_ = false;
  int status_ = 0;  // the wait status, once reaped
};

struct CommandResult {
  int exit_code = -1;  // -1: killed at the timeout
  std::string out;
  std::string err;
};

// Runs argv to completion (killed after `timeout`), feeding `input` to its stdin.
CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const std::string& input = "");

// `argv` run as user and group `uid` without supplementary groups (through setpriv; needs root),
// or as it is for uid 0.
std::vector<std::string> as_user(uid_t uid, std::vector<std::string> argv);

// A fresh private temporary directory, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);

}  // namespace yurthub::test
