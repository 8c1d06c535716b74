// ClientView: what one client was sent of one reactive resource (servicetopology's
// EndpointSlices/Endpoints), so its watch can be corrected when the ClusterView changes. Keyed by
// the request's identity (component, path, selectors), it outlives requests: a client lists once,
// then re-watches many times from its last resourceVersion, and every object it holds, from the
// list or from any watch, may need a correction. It keeps each object as the apiserver sent it,
// with how the client last saw it. All views share one byte budget (ClientViews::kBudgetBytes):
// a view whose growth would pass it gives up (the watch then ends with 410 on a change, and the
// client re-lists), so many clients cannot add up to many times the budget.
//
// ClientViews holds them, at most kMaxViews (least recently used dropped). Both are thread-safe:
// a client's list and watch may be served on different workers. Used by FilterChain.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "filters/filter.h"

namespace yurthub::filters {

class ClientView {
 public:
  // `budget`: the bytes every view together may hold; this view counts its own in it.
  struct Budget {
    std::atomic<std::size_t> used{0};
    std::size_t limit = 0;
  };
  explicit ClientView(std::shared_ptr<Budget> budget) : budget_(std::move(budget)) {}
  ~ClientView();
  ClientView(const ClientView&) = delete;
  ClientView& operator=(const ClientView&) = delete;

  // How the client last saw an object.
  enum class Seen : std::uint8_t { AsSent, Modified, Dropped };
  struct Entry {
    std::string raw_event;  // `{"type":...,"object":<as the apiserver sent it>}`
    Seen seen = Seen::AsSent;
    std::uint64_t digest = 0;  // of the modified object's JSON, when seen == Modified
  };

  // A list without a continue token replaces everything the client had.
  void clear(const std::shared_ptr<const ClusterView>& view);
  // The client was sent this object (filtered under `view`), or told it was deleted.
  void put(const std::string& key, std::string_view raw_event, Seen seen, std::uint64_t digest,
           const std::shared_ptr<const ClusterView>& view);
  void erase(const std::string& key);
  // Runs `visit` on every entry under `view`, unless every entry was already filtered under
  // exactly that view. `visit` may change the entry. False when the view gave up (over kMaxBytes).
  template <class Visit>
  bool for_each_stale(const std::shared_ptr<const ClusterView>& view, Visit&& visit) {
    std::lock_guard lock(mutex_);
    if (overflowed_) return false;
    if (!mixed_ && filtered_with_ == view) return true;
    for (auto& [key, entry] : entries_) visit(entry);
    filtered_with_ = view;
    mixed_ = false;
    return true;
  }
  bool overflowed() const;

 private:
  void note_view(const std::shared_ptr<const ClusterView>& view);  // REQUIRES: mutex_ held
  void release_all();                                              // REQUIRES: mutex_ held

  std::shared_ptr<Budget> budget_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;  // "namespace/name"
  std::size_t bytes_ = 0;
  bool overflowed_ = false;
  std::shared_ptr<const ClusterView> filtered_with_;  // the view of the last filtering
  bool mixed_ = false;  // entries were filtered under more than one view
};

class ClientViews {
 public:
  static constexpr std::size_t kMaxViews = 64;
  static constexpr std::size_t kBudgetBytes = 64 * 1024 * 1024;  // for all views together

  ClientViews();
  // The view of this request identity, created on first use.
  std::shared_ptr<ClientView> get(const std::string& identity);

 private:
  std::shared_ptr<ClientView::Budget> budget_;
  std::mutex mutex_;              // guards order_ and views_
  std::list<std::string> order_;  // most recently used first
  std::map<std::string, std::pair<std::shared_ptr<ClientView>, std::list<std::string>::iterator>>
      views_;
};

}  // namespace yurthub::filters
