// Kubernetes' time text; see time_text.h.
#include "base/time_text.h"

#include <ctime>

namespace yurthub::base {

std::string rfc3339_utc(std::int64_t unix_seconds) {
  const auto time = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  char text[32];
  if (::gmtime_r(&time, &utc) == nullptr) return std::to_string(unix_seconds);
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  if (n == 0) return std::to_string(unix_seconds);
  return std::string(text, n);
}

}  // namespace yurthub::base
