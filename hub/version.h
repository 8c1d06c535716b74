// The hub's version string, printed by --version and in the startup log line.
#pragma once

namespace yurthub::hub {
inline constexpr const char* kVersion = "0.1.0";
}  // namespace yurthub::hub
