// ServerSet: the configured apiservers, their health as last judged by the HealthChecker, and the
// load-balancing choice among the healthy ones (`--lb-mode` rr | priority, as YurtHub). Shared
// by all worker threads: health flags are atomics, the round-robin cursor is an atomic counter.
#pragma once

#include <atomic>
#include <bitset>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hub/options.h"

namespace yurthub::hub {

class ServerSet {
 public:
  using Mask = std::bitset<kMaxServers>;  // a bit per server, by index

  // All servers start unhealthy: nothing is forwarded until a probe has succeeded, so a hub that
  // starts while the cloud is unreachable answers from its cache at once.
  ServerSet(std::vector<ServerAddress> servers, LbMode mode);

  std::size_t size() const { return servers_.size(); }
  const ServerAddress& address(std::size_t index) const { return servers_[index]; }
  // "host:port" as a Host header names the server (an IPv6 address in brackets).
  const std::string& authority(std::size_t index) const { return authorities_[index]; }

  // A healthy server chosen by the lb mode, skipping indexes marked in `exclude` (servers that
  // already failed this request); nullopt when none is left.
  std::optional<std::size_t> pick(const Mask& exclude = {});

  bool healthy(std::size_t index) const { return healthy_[index].load(std::memory_order_acquire); }
  bool any_healthy() const;
  // Returns true when the value changed.
  bool set_healthy(std::size_t index, bool healthy);

 private:
  std::vector<ServerAddress> servers_;
  std::vector<std::string> authorities_;  // [index], built once: the Host of every request
  LbMode mode_;
  std::unique_ptr<std::atomic<bool>[]> healthy_;
  std::atomic<std::size_t> cursor_{0};
};

}  // namespace yurthub::hub
