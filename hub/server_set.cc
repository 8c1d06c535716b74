// Server selection; see server_set.h.
#include "hub/server_set.h"

namespace yurthub::hub {

ServerSet::ServerSet(std::vector<ServerAddress> servers, LbMode mode)
    : servers_(std::move(servers)), mode_(mode), healthy_(new std::atomic<bool>[servers_.size()]) {
  for (std::size_t i = 0; i < servers_.size(); ++i) healthy_[i].store(false);
}

std::optional<std::size_t> ServerSet::pick(const std::vector<bool>& exclude) {
  const std::size_t n = servers_.size();
  auto usable = [&](std::size_t i) { return healthy(i) && (i >= exclude.size() || !exclude[i]); };
  // priority: the first healthy server in flag order; rr: start from a rotating cursor.
  const std::size_t start =
      mode_ == LbMode::Priority ? 0 : cursor_.fetch_add(1, std::memory_order_relaxed) % n;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = (start + k) % n;
    if (usable(i)) return i;
  }
  return std::nullopt;
}

bool ServerSet::any_healthy() const {
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    if (healthy(i)) return true;
  }
  return false;
}

bool ServerSet::set_healthy(std::size_t index, bool healthy) {
  return healthy_[index].exchange(healthy, std::memory_order_acq_rel) != healthy;
}

}  // namespace yurthub::hub
