// ServerSet: the configured apiservers, their health as last judged by the HealthChecker, and the
// load-balancing choice among the healthy ones (`--lb-mode` rr | priority, as YurtHub). Shared
// by all worker threads: health flags are atomics, the round-robin cursor is an atomic counter.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "hub/options.h"

namespace yurthub::hub {

class ServerSet {
 public:
  // All servers start unhealthy: nothing is forwarded until a probe has succeeded, so a hub that
  // starts while the cloud is unreachable answers from its cache at once.
  ServerSet(std::vector<ServerAddress> servers, LbMode mode);

  std::size_t size() const { return servers_.size(); }
  const ServerAddress& address(std::size_t index) const { return servers_[index]; }

  // A healthy server chosen by the lb mode, skipping indexes marked in `exclude` (servers that
  // already failed this request); nullopt when none is left.
  std::optional<std::size_t> pick(const std::vector<bool>& exclude = {});

  bool healthy(std::size_t index) const { return healthy_[index].load(std::memory_order_acquire); }
  bool any_healthy() const;
  // Returns true when the value changed.
  bool set_healthy(std::size_t index, bool healthy);

 private:
  std::vector<ServerAddress> servers_;
  LbMode mode_;
  std::unique_ptr<std::atomic<bool>[]> healthy_;
  std::atomic<std::size_t> cursor_{0};
};

}  // namespace yurthub::hub
