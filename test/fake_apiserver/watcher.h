// One watch's event queue and filter. The Store offers every committed change to every Watcher;
// the Watcher applies its resource/namespace/selector filter with the apiserver's cacher semantics
// (an object that stops matching becomes DELETED, one that starts matching becomes ADDED; see
// k8s.io/apiserver/pkg/storage/cacher cacheWatcher.convertToWatchEvent) and queues the result.
// The queue is bounded: a client that stops reading overflows it and its watch is ended.
// Single-threaded: used only from the server's io_context thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <rapidjson/document.h>

#include "test/fake_apiserver/selectors.h"

namespace yurthub::fake {

enum class EventType { Added, Modified, Deleted };

// "ADDED", "MODIFIED", "DELETED".
const char* event_type_name(EventType type);

// A committed change, as kept in the Store's history ring.
struct Event {
  EventType type = EventType::Added;
  std::uint64_t rv = 0;
  std::string resource;  // ResourceInfo::key()
  std::string ns;
  std::string name;
  // The object after the change, without kind/apiVersion. For Deleted: its last state carrying
  // the deletion's resourceVersion.
  std::shared_ptr<const std::string> object;
  std::shared_ptr<const std::string> prev;  // the object before the change; null for Added
};

struct WatchFilter {
  std::string resource;  // ResourceInfo::key()
  std::string ns;        // "" = all namespaces
  LabelSelector labels;
  FieldSelector fields;

  bool matches_scope(const Event& e) const;
  bool has_selectors() const { return !labels.empty() || !fields.empty(); }
  bool matches_object(const rapidjson::Value& obj) const;
  // Parses `json` and evaluates the selectors; true if there are none.
  bool matches_json(const std::string& json) const;
};

// What a watch sends: an event type and the object (without kind/apiVersion).
struct WatchItem {
  EventType type = EventType::Added;
  std::shared_ptr<const std::string> object;
  std::uint64_t rv = 0;
  // Not an object's event: the end of a streaming list's initial events, at `rv` (the BOOKMARK).
  bool initial_events_end = false;
};

class Watcher {
 public:
  // `max_queue`: how many live events may wait unsent before the watch overflows.
  Watcher(WatchFilter filter, std::size_t max_queue);

  // Filters `e` and queues what this watch should see, if anything. `initial`: part of the
  // watch's start (history replay), which does not count against the bound.
  void offer(const Event& e, bool initial = false);
  // Queues an initial event as is (the synthetic ADDED of a watch from resourceVersion 0).
  void push_initial(WatchItem item);

  std::optional<WatchItem> pop();
  bool empty() const { return queue_.empty(); }
  std::size_t size() const { return queue_.size(); }

  // Ends the watch (server shutdown): the stream stops, dropping what is still queued, and ends
  // with the terminating chunk.
  void close();
  bool closed() const { return closed_; }
  bool overflowed() const { return overflowed_; }

  // Called whenever the watch has something new to look at (an event, close, overflow).
  void set_wakeup(std::function<void()> fn) { wakeup_ = std::move(fn); }
  const WatchFilter& filter() const { return filter_; }

 private:
  void enqueue(WatchItem item, bool initial);
  void wake();

  WatchFilter filter_;
  std::size_t max_queue_;
  std::size_t initial_left_ = 0;  // initial items still at the front of queue_
  std::deque<WatchItem> queue_;
  bool closed_ = false;
  bool overflowed_ = false;
  std::function<void()> wakeup_;
};

}  // namespace yurthub::fake
