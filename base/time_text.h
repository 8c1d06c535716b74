// Times as Kubernetes writes them (metav1.Time): RFC 3339 in UTC to the second,
// "2026-11-27T03:04:05Z". Used wherever the hub writes a time into an object or a listing: the
// Autonomy condition (cache/autonomy_condition.cc), the OTA image-pull patch (ota/pod_checks.cc)
// and `yurthub cache|journal` (cache/inspect.cc).
#pragma once

#include <cstdint>
#include <string>

namespace yurthub::base {

// `unix_seconds` as RFC 3339 in UTC; the number itself when the C library cannot convert it.
std::string rfc3339_utc(std::int64_t unix_seconds);

}  // namespace yurthub::base
