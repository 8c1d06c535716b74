// What each client was sent of reactive resources; see client_view.h.
#include "filters/client_view.h"

#include "base/log.h"

namespace yurthub::filters {

void ClientView::note_view(const std::shared_ptr<const ClusterView>& view) {
  if (filtered_with_ != view) {
    mixed_ = mixed_ || (filtered_with_ != nullptr && !entries_.empty());
    filtered_with_ = view;
  }
}

ClientView::~ClientView() { budget_->used -= bytes_; }

void ClientView::release_all() {
  budget_->used -= bytes_;
  entries_.clear();
  bytes_ = 0;
}

void ClientView::clear(const std::shared_ptr<const ClusterView>& view) {
  std::lock_guard lock(mutex_);
  release_all();
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
  const std::size_t before = e.raw_event.size();
  if (raw_event.size() > before) {
    const std::size_t growth = raw_event.size() - before;
    if (budget_->used.fetch_add(growth) + growth > budget_->limit) {
      budget_->used -= growth;
      YH_LOG(Warning) << "filters: the clients' views together would hold more than "
                      << (budget_->limit >> 20) << " MiB of filtered objects; this client will "
                      << "re-list, not be corrected, on a topology change";
      overflowed_ = true;
      release_all();
      return;
    }
  } else {
    budget_->used -= before - raw_event.size();
  }
  bytes_ = bytes_ - before + raw_event.size();
  e.raw_event.assign(raw_event);
  e.seen = seen;
  e.digest = digest;
}

void ClientView::erase(const std::string& key) {
  std::lock_guard lock(mutex_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    bytes_ -= it->second.raw_event.size();
    budget_->used -= it->second.raw_event.size();
    entries_.erase(it);
  }
}

bool ClientView::overflowed() const {
  std::lock_guard lock(mutex_);
  return overflowed_;
}

ClientViews::ClientViews() : budget_(std::make_shared<ClientView::Budget>()) {
  budget_->limit = kBudgetBytes;
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
  auto view = std::make_shared<ClientView>(budget_);
  views_.emplace(identity, std::make_pair(view, order_.begin()));
  return view;
}

}  // namespace yurthub::filters
