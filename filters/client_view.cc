// What each client was sent of reactive resources; see client_view.h.
#include "filters/client_view.h"

#include "hub/log.h"

namespace yurthub::filters {

void ClientView::note_view(const std::shared_ptr<const ClusterView>& view) {
  if (filtered_with_ != view) {
    mixed_ = mixed_ || (filtered_with_ != nullptr && !entries_.empty());
    filtered_with_ = view;
  }
}

void ClientView::clear(const std::shared_ptr<const ClusterView>& view) {
  std::lock_guard lock(mutex_);
  entries_.clear();
  bytes_ = 0;
  overflowed_ = false;
  mixed_ = false;
  filtered_with_ = view;
}

void ClientView::put(const std::string& key, std::string_view raw_event, Seen seen,
                     std::uint64_t digest, const std::shared_ptr<const ClusterView>& view) {
  std::lock_guard lock(mutex_);
  if (overflowed_) return;
  note_view(view);
  Entry& e = entries_[key];
  bytes_ = bytes_ - e.raw_event.size() + raw_event.size();
  e.raw_event.assign(raw_event);
  e.seen = seen;
  e.digest = digest;
  if (bytes_ > kMaxBytes) {
    YH_LOG(Warning) << "filters: a client holds more than " << (kMaxBytes >> 20)
                    << " MiB of filtered objects; it will re-list, not be corrected, on a topology change";
    overflowed_ = true;
    entries_.clear();
    bytes_ = 0;
  }
}

void ClientView::erase(const std::string& key) {
  std::lock_guard lock(mutex_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    bytes_ -= it->second.raw_event.size();
    entries_.erase(it);
  }
}

bool ClientView::overflowed() const {
  std::lock_guard lock(mutex_);
  return overflowed_;
}

std::shared_ptr<ClientView> ClientViews::get(const std::string& identity) {
  std::lock_guard lock(mutex_);
  if (auto it = views_.find(identity); it != views_.end()) {
    order_.splice(order_.begin(), order_, it->second.second);
    return it->second.first;
  }
  if (views_.size() >= kMaxViews) {
    views_.erase(order_.back());
    order_.pop_back();
  }
  order_.push_front(identity);
  auto view = std::make_shared<ClientView>();
  views_.emplace(identity, std::make_pair(view, order_.begin()));
  return view;
}

}  // namespace yurthub::filters
