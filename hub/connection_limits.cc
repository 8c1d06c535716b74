// Client connection bounds; see connection_limits.h.
#include "hub/connection_limits.h"

#include <unistd.h>

#include "net/peer_credentials.h"

namespace yurthub::hub {

ConnectionLimits::Slot::~Slot() {
  if (limits_ != nullptr) limits_->release(peer_);
}

std::optional<ConnectionLimits::Slot> ConnectionLimits::acquire(const std::string& peer) {
  std::lock_guard lock(mutex_);
  int& mine = per_peer_[peer];
  if (total_ >= max_total_ || mine >= max_per_peer_) {
    if (mine == 0) per_peer_.erase(peer);
    return std::nullopt;
  }
  ++total_;
  ++mine;
  return Slot(this, peer);
}

void ConnectionLimits::release(const std::string& peer) {
  std::lock_guard lock(mutex_);
  --total_;
  auto it = per_peer_.find(peer);
  if (it != per_peer_.end() && --it->second <= 0) per_peer_.erase(it);
}

int ConnectionLimits::open() const {
  std::lock_guard lock(mutex_);
  return total_;
}

std::string ConnectionLimits::peer_of(net::TcpSocket& socket) {
  boost::system::error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  const auto local = socket.local_endpoint(ec);
  if (!ec && remote.address().is_loopback()) {
    if (auto uid = net::loopback_peer_uid(local, remote)) return "uid:" + std::to_string(*uid);
  }
  return "ip:" + remote.address().to_string();
}

bool ConnectionLimits::is_privileged(const std::string& peer) {
  return peer == "uid:0" || peer == "uid:" + std::to_string(::geteuid());
}

}  // namespace yurthub::hub
