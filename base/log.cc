// klog-style line logger; see log.h.
#include "base/log.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>

#include "base/clock.h"

namespace yurthub::log {
namespace {

std::atomic<int> min_level{static_cast<int>(Level::Info)};

char level_letter(Level level) {
  switch (level) {
    case Level::Debug:
      return 'D';
    case Level::Info:
      return 'I';
    case Level::Warning:
      return 'W';
    case Level::Error:
      return 'E';
  }
  return '?';
}

}  // namespace

void set_min_level(Level level) { min_level.store(static_cast<int>(level)); }

bool enabled(Level level) {
  return static_cast<int>(level) >= min_level.load(std::memory_order_relaxed);
}

Line::Line(Level level, const char* file, int line) {
  auto now = base::WallClock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
      1000000;
  std::tm tm{};
  localtime_r(&secs, &tm);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%c%02d%02d %02d:%02d:%02d.%06ld %7ld ", level_letter(level),
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long>(micros), static_cast<long>(::syscall(SYS_gettid)));
  const char* base = std::strrchr(file, '/');
  out_ << stamp << (base ? base + 1 : file) << ':' << line << "] ";
}

Line::~Line() {
  // Parts of a line come from clients (paths, names, User-Agents): control characters are
  // escaped, so a request cannot forge log lines or drive a terminal, and a line is bounded.
  constexpr std::size_t kMaxLineBytes = 8192;
  const std::string raw = out_.str();
  std::string text;
  text.reserve(std::min(raw.size(), kMaxLineBytes) + 16);
  for (unsigned char c : raw) {
    if (text.size() >= kMaxLineBytes) {
      text += "...(truncated)";
      break;
    }
    if (c >= 0x20 && c != 0x7f) {
      text += static_cast<char>(c);
    } else if (c == '\n') {
      text += "\\n";
    } else if (c == '\r') {
      text += "\\r";
    } else if (c == '\t') {
      text += "\\t";
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      text += "\\x";
      text += kHex[c >> 4];
      text += kHex[c & 15];
    }
  }
  text += '\n';
  // One write per line keeps lines whole across threads; a short write to stderr is not retried.
  [[maybe_unused]] auto n = ::write(STDERR_FILENO, text.data(), text.size());
}

}  // namespace yurthub::log
