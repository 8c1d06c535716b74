// Offline watches' inboxes for local changes; see local_events.h.
#include "cache/local_events.h"

#include <algorithm>

namespace yurthub::cache {

std::vector<LocalChange> LocalEvents::Subscription::take() {
  std::lock_guard lock(mutex_);
  std::vector<LocalChange> out(std::make_move_iterator(pending_.begin()),
                               std::make_move_iterator(pending_.end()));
  pending_.clear();
  return out;
}

bool LocalEvents::Subscription::overflowed() const {
  std::lock_guard lock(mutex_);
  return overflowed_;
}

std::shared_ptr<LocalEvents::Subscription> LocalEvents::subscribe(
    std::string component, std::string group, std::string version, std::string resource,
    std::string namespace_name, std::function<void()> wake, std::string owner) {
  auto sub = std::make_shared<Subscription>();
  sub->owner_ = std::move(owner);
  sub->component_ = std::move(component);
  sub->group_ = std::move(group);
  sub->version_ = std::move(version);
  sub->resource_ = std::move(resource);
  sub->namespace_name_ = std::move(namespace_name);
  sub->wake_ = std::move(wake);
  std::lock_guard lock(mutex_);
  subscriptions_.push_back(sub);
  return sub;
}

void LocalEvents::publish(const LocalChange& change) {
  std::vector<std::shared_ptr<Subscription>> targets;
  {
    std::lock_guard lock(mutex_);
    std::erase_if(subscriptions_, [](const auto& weak) { return weak.expired(); });
    for (const auto& weak : subscriptions_) {
      auto sub = weak.lock();
      if (!sub || sub->owner_ != change.owner || sub->component_ != change.component ||
          sub->group_ != change.group || sub->version_ != change.version ||
          sub->resource_ != change.resource ||
          (!sub->namespace_name_.empty() && sub->namespace_name_ != change.namespace_name)) {
        continue;
      }
      targets.push_back(std::move(sub));
    }
  }
  for (const auto& sub : targets) {
    {
      std::lock_guard lock(sub->mutex_);
      if (sub->pending_.size() >= Subscription::kMaxPending) {
        sub->overflowed_ = true;
      } else {
        sub->pending_.push_back(change);
      }
    }
    sub->wake_();
  }
}

}  // namespace yurthub::cache
