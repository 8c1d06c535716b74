// Logging in klog's line format (`I1121 13:47:00.123456   1234 file.cc:42] message`), which
// operators of Kubernetes nodes already grep for. Lines go to stderr (journald under systemd), one
// write(2) per line so threads never interleave. Thread-safe; the level is set once at startup.
//
//   YH_LOG(Info) << "proxy listening on " << endpoint;
#pragma once

#include <sstream>
#include <string_view>

namespace yurthub::log {

enum class Level { Debug = 0, Info = 1, Warning = 2, Error = 3 };

void set_min_level(Level level);
bool enabled(Level level);

// One log line; written when destroyed.
class Line {
 public:
  Line(Level level, const char* file, int line);
  ~Line();
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;

  template <class T>
  Line& operator<<(const T& value) {
    out_ << value;
    return *this;
  }

 private:
  std::ostringstream out_;
};

}  // namespace yurthub::log

namespace yurthub::log {
// Turns `Line(...) << a << b` into a void expression (glog's LogMessageVoidify): `&` binds more
// loosely than `<<`, so the whole chain is built first.
struct Voidify {
  void operator&(const Line&) {}
};
}  // namespace yurthub::log

// An expression, so it is safe in any statement position (no dangling else).
#define YH_LOG(level)                                    \
  !::yurthub::log::enabled(::yurthub::log::Level::level) \
      ? (void)0                                          \
      : ::yurthub::log::Voidify() &                      \
            ::yurthub::log::Line(::yurthub::log::Level::level, __FILE__, __LINE__)
