// Reading the small files the hub and pool-admission are configured with (kubeconfigs and the
// certificates, keys and tokens they name, serving certificates) and the kubeconfig loaded from
// disk: the I/O that kube/kubeconfig.h leaves to its caller (the kube layer does none). Called by
// cmd/yurthub.cc, hub/certificate and admission/ at start and when a file is reloaded.
#pragma once

#include <cstddef>
#include <string>

#include "base/result.h"
#include "kube/kubeconfig.h"

namespace yurthub::net {

// The whole of the file at `path`, at most `max_bytes` (a kubeconfig or a PEM file is a few KiB;
// a larger one is refused rather than read). An error names the path and why.
inline constexpr std::size_t kMaxConfigFileBytes = std::size_t{4} << 20;
Result<std::string> read_config_file(const std::string& path,
                                     std::size_t max_bytes = kMaxConfigFileBytes);

// Reads the kubeconfig at `path` and the files it names (relative to its directory) and
// validates it (kube::parse_kubeconfig). Errors name the file and the field.
Result<kube::Credentials> load_kubeconfig(const std::string& path);

}  // namespace yurthub::net
