// Watch filtering and queueing; see watcher.h.
#include "test/fake_apiserver/watcher.h"

#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake {
namespace {

// The previous object re-stamped with the event's resourceVersion: what the cacher sends as the
// DELETED object when an object moves out of a watch's selector.
std::shared_ptr<const std::string> restamp(const std::string& json, std::uint64_t rv) {
  auto doc = parse_json(json);
  if (!doc || !doc->IsObject()) return std::make_shared<const std::string>(json);
  set_meta_string(*doc, "resourceVersion", std::to_string(rv));
  return std::make_shared<const std::string>(to_json(*doc));
}

}  // namespace

const char* event_type_name(EventType type) {
  switch (type) {
    case EventType::Added:
      return "ADDED";
    case EventType::Modified:
      return "MODIFIED";
    case EventType::Deleted:
      return "DELETED";
  }
  return "ERROR";
}

bool WatchFilter::matches_scope(const Event& e) const {
  return e.resource == resource && (ns.empty() || e.ns == ns);
}

bool WatchFilter::matches_object(const rapidjson::Value& obj) const {
  return labels.matches(obj) && fields.matches(obj);
}

bool WatchFilter::matches_json(const std::string& json) const {
  if (!has_selectors()) return true;
  auto doc = parse_json(json);
  return doc.ok() && doc->IsObject() && matches_object(*doc);
}

Watcher::Watcher(WatchFilter filter, std::size_t max_queue)
    : filter_(std::move(filter)), max_queue_(max_queue) {}

void Watcher::offer(const Event& e, bool initial) {
  if (closed_ || overflowed_ || !filter_.matches_scope(e)) return;
  if (!filter_.has_selectors()) {
    enqueue(WatchItem{e.type, e.object, e.rv}, initial);
    return;
  }
  bool cur = e.type != EventType::Deleted && filter_.matches_json(*e.object);
  bool old = e.prev != nullptr && filter_.matches_json(*e.prev);
  if (e.type == EventType::Deleted) {
    if (old) enqueue(WatchItem{EventType::Deleted, e.object, e.rv}, initial);
    return;
  }
  if (cur && !old) {
    enqueue(WatchItem{EventType::Added, e.object, e.rv}, initial);
  } else if (cur && old) {
    enqueue(WatchItem{EventType::Modified, e.object, e.rv}, initial);
  } else if (!cur && old) {
    enqueue(WatchItem{EventType::Deleted, restamp(*e.prev, e.rv), e.rv}, initial);
  }
}

void Watcher::push_initial(WatchItem item) { enqueue(std::move(item), true); }

void Watcher::enqueue(WatchItem item, bool initial) {
  if (initial) {
    // Initial items stay in front of every live one: they are all queued before registration.
    queue_.push_back(std::move(item));
    ++initial_left_;
    return;
  }
  if (queue_.size() - initial_left_ >= max_queue_) {
    overflowed_ = true;
    queue_.clear();
    initial_left_ = 0;
    wake();
    return;
  }
  queue_.push_back(std::move(item));
  wake();
}

std::optional<WatchItem> Watcher::pop() {
  if (queue_.empty()) return std::nullopt;
  WatchItem item = std::move(queue_.front());
  queue_.pop_front();
  if (initial_left_ > 0) --initial_left_;
  return item;
}

void Watcher::close() {
  closed_ = true;
  queue_.clear();
  initial_left_ = 0;
  wake();
}

void Watcher::wake() {
  if (wakeup_) wakeup_();
}

}  // namespace yurthub::fake
