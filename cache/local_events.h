// LocalEvents: changes the node made to its cache while offline (journaled patches and updates),
// delivered to the offline watches that show them (a MODIFIED event), the way the apiserver
// would have told them. OfflineWrites publishes; LocalProxy::watch subscribes for the life of one
// held-open watch. Thread-safe: publish() from any worker thread; each subscription's inbox is
// drained by its own watch, which publish() wakes through the ResponseWriter's waker.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace yurthub::cache {

struct LocalChange {
  std::string component;  // whose cached copy changed
  std::string group, version, resource, namespace_name, name;
  std::string json;        // the object as that component's cache now holds it
  std::string owner = {};  // the copy's owner (cache/callers.h): "" = the node
};

class LocalEvents {
 public:
  // One offline watch's inbox. Holds at most kMaxPending changes; past that it is marked
  // overflowed and the watch ends (the client re-watches and re-lists from the cache).
  class Subscription {
   public:
    static constexpr std::size_t kMaxPending = 1024;
    std::vector<LocalChange> take();
    bool overflowed() const;

   private:
    friend class LocalEvents;
    std::string component_, group_, version_, resource_, namespace_name_, owner_;
    std::function<void()> wake_;
    mutable std::mutex mutex_;  // guards pending_, overflowed_
    std::deque<LocalChange> pending_;
    bool overflowed_ = false;
  };

  // Changes to `resource` of `owner`'s `component` in `namespace_name` ("" = all namespaces)
  // reach the subscription until it is destroyed.
  std::shared_ptr<Subscription> subscribe(std::string component, std::string group,
                                          std::string version, std::string resource,
                                          std::string namespace_name, std::function<void()> wake,
                                          std::string owner = {});
  void publish(const LocalChange& change);

 private:
  std::mutex mutex_;  // guards subscriptions_
  std::vector<std::weak_ptr<Subscription>> subscriptions_;
};

}  // namespace yurthub::cache
