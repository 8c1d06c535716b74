// Helpers shared by the in-process benchmarks (filter_bench, cache_bench): clocks, medians, the
// `--quick` flag and the result rows they print. Header-only; test/bench only.
//
// Each benchmark checks what it measured (the right number of objects filtered, listed, written)
// and exits non-zero when the check fails, so a broken unit can never report a fast time. ctest
// runs them with --quick (tiny sizes, one run) for those checks only; no time is ever asserted.
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace yurthub::bench {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// CPU seconds used by the calling thread so far.
inline double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// CPU seconds used by the whole process so far (all threads: the cache writer's included).
inline double process_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];
}

inline bool quick_mode(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--quick") return true;
  return false;
}

// The value of --name=VALUE, or `fallback`.
inline std::string flag(int argc, char** argv, std::string_view name, std::string fallback) {
  const std::string prefix = "--" + std::string(name) + "=";
  for (int i = 1; i < argc; ++i) {
    std::string_view arg(argv[i]);
    if (arg.starts_with(prefix)) return std::string(arg.substr(prefix.size()));
  }
  return fallback;
}

// Stops the benchmark: what it measured is wrong, so its time means nothing.
[[noreturn]] inline void fail(const std::string& why) {
  std::fprintf(stderr, "bench: check failed: %s\n", why.c_str());
  std::exit(1);
}

// One markdown row: | measure | value | budget | verdict |.
inline void row(const std::string& measure, const std::string& value, const std::string& budget,
                const std::string& verdict) {
  std::printf("| %s | %s | %s | %s |\n", measure.c_str(), value.c_str(), budget.c_str(),
              verdict.c_str());
  std::fflush(stdout);
}

inline std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

}  // namespace yurthub::bench
