// Server selection; see server_set.h.
#include "hub/server_set.h"

#include "base/url.h"

namespace yurthub::hub {

ServerSet::ServerSet(std::vector<ServerAddress> servers, LbMode mode)
    : servers_(std::move(servers)), mode_(mode), healthy_(new std::atomic<bool>[servers_.size()]) {
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    healthy_[i].store(false);
    authorities_.push_back(base::host_port(servers_[i].host, servers_[i].port));
  }
}

std::optional<std::size_t> ServerSet::pick(const Mask& exclude) {
  // Rotate over the usable servers themselves: skipping unhealthy ones from a rotating start
  // (as YurtHub does) would send the dead server's share to its successor.
  std::size_t usable[kMaxServers];
  std::size_t count = 0;
  for (std::size_t i = 0; i < servers_.size() && count < std::size(usable); ++i) {
    if (healthy(i) && (i >= exclude.size() || !exclude[i])) usable[count++] = i;
  }
  if (count == 0) return std::nullopt;
  if (mode_ == LbMode::Priority) return usable[0];
  return usable[cursor_.fetch_add(1, std::memory_order_relaxed) % count];
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
