// The node's watch cache of one pool-scope resource; see watch_cache.h.
#include "pool/watch_cache.h"

#include <algorithm>

#include <rapidjson/document.h>

#include "base/json_frames.h"
#include "base/json_parse.h"
#include "base/log.h"
#include "kube/object_meta.h"

namespace yurthub::pool {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The apiserver writes a watch object's TypeMeta first: `{"kind":"Service","apiVersion":"v1",`.
// A list item has neither; the cache keeps every object as a list item. Anything written
// otherwise is kept as it is.
std::string as_list_item(std::string_view json) {
  auto skip_member = [&](std::size_t at, std::string_view key) -> std::size_t {
    if (json.compare(at, key.size(), key) != 0) return 0;
    std::size_t i = at + key.size();
    if (i >= json.size() || json[i] != '"') return 0;
    for (++i; i < json.size() && json[i] != '"'; ++i) {
      if (json[i] == '\\') return 0;  // escapes: keep the object as sent
    }
    return i + 1 < json.size() && json[i + 1] == ',' ? i + 2 : 0;
  };
  const std::size_t after_kind = skip_member(1, "\"kind\":");
  const std::size_t after_version = after_kind ? skip_member(after_kind, "\"apiVersion\":") : 0;
  if (json.empty() || json[0] != '{' || after_version == 0) return std::string(json);
  std::string item;
  item.reserve(json.size() - after_version + 1);
  item += '{';
  item.append(json.substr(after_version));
  return item;
}

// `json` with metadata.resourceVersion set to `version` (a DELETED object found by a re-list).
std::string with_resource_version(const std::string& json, std::uint64_t version) {
  rapidjson::Document doc;
  if (!base::parse_json(json, doc) || !doc.IsObject()) return json;
  auto meta = doc.FindMember("metadata");
  if (meta == doc.MemberEnd() || !meta->value.IsObject()) return json;
  const std::string text = std::to_string(version);
  rapidjson::Value value(text.c_str(), static_cast<rapidjson::SizeType>(text.size()),
                         doc.GetAllocator());
  auto rv = meta->value.FindMember("resourceVersion");
  if (rv != meta->value.MemberEnd()) {
    rv->value = value;
  } else {
    meta->value.AddMember("resourceVersion", value, doc.GetAllocator());
  }
  return base::to_json(doc);
}

std::optional<CachedObject> cached_object(std::string_view json) {
  auto meta = kube::object_meta(json);
  if (!meta || meta->name.empty()) return std::nullopt;
  CachedObject o;
  o.key = meta->namespace_name.empty() ? meta->name : meta->namespace_name + "/" + meta->name;
  o.namespace_name = std::move(meta->namespace_name);
  o.name = std::move(meta->name);
  o.resource_version = meta->resource_version;
  o.json = as_list_item(json);
  return o;
}

// Reads a list's members and items; items become cached objects.
class ListReader final : public base::ListSink {
 public:
  void member(std::string_view key, std::string_view raw) override {
    auto unquoted = [&] {
      return raw.size() >= 2 ? std::string(raw.substr(1, raw.size() - 2)) : std::string();
    };
    if (key == "kind") kind = unquoted();
    if (key == "apiVersion") api_version = unquoted();
    if (key == "metadata") {
      rapidjson::Document doc;
      if (base::parse_json(raw, doc) && doc.IsObject() && doc.HasMember("resourceVersion") &&
          doc["resourceVersion"].IsString()) {
        resource_version = doc["resourceVersion"].GetString();
      }
    }
  }
  void items_begin() override {}
  void item(std::string_view raw) override {
    if (auto o = cached_object(raw)) {
      objects.push_back(std::make_shared<const CachedObject>(std::move(*o)));
    } else {
      ++unnamed;
    }
  }
  void items_end() override {}
  void end() override {}

  std::string kind, api_version, resource_version;
  std::vector<ObjectPtr> objects;
  std::size_t unnamed = 0;
};

}  // namespace

std::vector<EventPtr> WatchCache::Subscription::take() {
  std::lock_guard lock(mutex_);
  std::vector<EventPtr> out(std::make_move_iterator(pending_.begin()),
                            std::make_move_iterator(pending_.end()));
  pending_.clear();
  return out;
}

bool WatchCache::Subscription::overflowed() const {
  std::lock_guard lock(mutex_);
  return overflowed_;
}

WatchCache::WatchCache(Options options) : options_(std::move(options)) {}

bool WatchCache::synced() const {
  std::lock_guard lock(mutex_);
  return synced_;
}

std::uint64_t WatchCache::resource_version() const {
  std::lock_guard lock(mutex_);
  return resource_version_;
}

std::string WatchCache::kind() const {
  std::lock_guard lock(mutex_);
  return kind_;
}

std::string WatchCache::api_version() const {
  std::lock_guard lock(mutex_);
  return api_version_;
}

std::shared_ptr<const CacheSnapshot> WatchCache::snapshot() const {
  std::lock_guard lock(mutex_);
  if (!snapshot_ || snapshot_->resource_version != resource_version_) {
    auto made = std::make_shared<CacheSnapshot>();
    made->resource_version = resource_version_;
    made->kind = kind_;
    made->api_version = api_version_;
    made->objects.reserve(objects_.size());
    for (const auto& [key, object] : objects_) made->objects.push_back(object);
    snapshot_ = std::move(made);
  }
  return snapshot_;
}

WatchCache::Start WatchCache::watch(std::optional<std::uint64_t> from, std::function<void()> wake) {
  Start start;
  auto subscription = std::make_shared<Subscription>();
  subscription->wake_ = std::move(wake);
  subscription->max_pending_ = options_.max_pending;
  if (!from) start.initial = snapshot();  // before the lock: snapshot() takes it too
  std::lock_guard lock(mutex_);
  if (from) {
    if (*from < window_start_) {
      start.expired = true;
      return start;
    }
    for (const Recorded& r : window_) {
      if (r.event->position > *from) start.backlog.push_back(r.event);
    }
  } else if (start.initial->resource_version != resource_version_) {
    // Changed between the two locks: what happened since goes in the backlog.
    for (const Recorded& r : window_) {
      if (r.event->position > start.initial->resource_version) start.backlog.push_back(r.event);
    }
  }
  subscriptions_.push_back(subscription);
  start.subscription = std::move(subscription);
  return start;
}

void WatchCache::emit(const EventPtr& event) {
  const std::size_t bytes =
      event->object->json.size() + (event->previous ? event->previous->json.size() : 0);
  window_.push_back({event, SteadyClock::now(), bytes});
  window_bytes_ += bytes;
  snapshot_.reset();
  for (auto it = subscriptions_.begin(); it != subscriptions_.end();) {
    auto s = it->lock();
    if (!s) {
      it = subscriptions_.erase(it);
      continue;
    }
    {
      std::lock_guard inbox(s->mutex_);
      if (s->overflowed_) {
        // dropped: its watch ends and it is removed on its next take
      } else if (s->pending_.size() >= s->max_pending_) {
        s->overflowed_ = true;
        s->pending_.clear();
      } else {
        s->pending_.push_back(event);
        ++delivered_;
      }
    }
    if (std::find(to_wake_.begin(), to_wake_.end(), s) == to_wake_.end()) to_wake_.push_back(s);
    ++it;
  }
}

void WatchCache::trim_window() {
  const auto oldest = SteadyClock::now() - options_.window_age;
  while (!window_.empty() &&
         (window_.size() > options_.window_events || window_.front().at < oldest ||
          window_bytes_ > options_.window_bytes)) {
    // A watch from before the dropped event's position can no longer be served.
    window_start_ = std::max(window_start_, window_.front().event->position);
    window_bytes_ -= window_.front().bytes;
    window_.pop_front();
  }
}

Status WatchCache::listed(std::string_view body, std::string* resource_version) {
  ListReader list;
  base::ListFramer framer(list);
  if (Status fed = framer.feed(body); !fed) return fed;
  if (!framer.done()) return make_error("list ends early");
  const std::uint64_t version = kube::parse_resource_version(list.resource_version);
  if (version == 0) return make_error("list has no metadata.resourceVersion");
  if (list.unnamed > 0) {
    YH_LOG(Warning) << "watch cache " << options_.name << ": ignored " << list.unnamed
                    << " listed objects without metadata.name";
  }
  std::sort(list.objects.begin(), list.objects.end(),
            [](const ObjectPtr& a, const ObjectPtr& b) { return a->key < b->key; });

  std::lock_guard lock(mutex_);
  if (list.kind.size() > 4 && list.kind.ends_with("List")) {
    kind_ = list.kind.substr(0, list.kind.size() - 4);
  }
  if (!list.api_version.empty()) api_version_ = list.api_version;
  std::map<std::string, ObjectPtr> next;
  std::vector<EventPtr> changes;
  for (ObjectPtr& object : list.objects) {
    auto old = objects_.find(object->key);
    if (!synced_ || old == objects_.end() ||
        old->second->resource_version != object->resource_version) {
      auto e = std::make_shared<CacheEvent>();
      e->type =
          synced_ && old != objects_.end() ? CacheEvent::Type::Modified : CacheEvent::Type::Added;
      e->position = version;
      e->object = object;
      if (old != objects_.end()) e->previous = old->second;
      if (synced_) changes.push_back(std::move(e));
    }
    next.emplace_hint(next.end(), object->key, object);
  }
  if (synced_) {
    for (const auto& [key, object] : objects_) {
      if (next.count(key) > 0) continue;
      auto gone = std::make_shared<CachedObject>(*object);
      gone->resource_version = version;
      gone->json = with_resource_version(object->json, version);
      auto e = std::make_shared<CacheEvent>();
      e->type = CacheEvent::Type::Deleted;
      e->position = version;
      e->object = std::move(gone);
      e->previous = object;
      changes.push_back(std::move(e));
    }
  }
  // A watch from before this list resumes through the difference: it sits at the list's
  // resourceVersion, after everything the window held.
  objects_ = std::move(next);
  resource_version_ = std::max(resource_version_, version);
  if (!synced_) window_start_ = version;
  synced_ = true;
  snapshot_.reset();
  for (EventPtr& e : changes) emit(e);  // woken by events_done(), which follows
  *resource_version = std::to_string(version);
  return Status{};
}

net::EventVerdict WatchCache::event(std::string_view raw, std::string* resource_version,
                                    std::string* reason) {
  auto parts = base::split_watch_event(raw);
  if (!parts) {
    *reason = "watch event that is not a JSON object: " + std::string(raw.substr(0, 200));
    return net::EventVerdict::Failed;
  }
  if (parts->type == "ERROR") {
    rapidjson::Document status;
    const bool expired = base::parse_json(parts->object, status) && status.IsObject() &&
                         status.HasMember("code") && status["code"].IsInt() &&
                         status["code"].GetInt() == 410;
    *reason = "ERROR event: " + parts->object.substr(0, 200);
    return expired ? net::EventVerdict::Relist : net::EventVerdict::Failed;
  }
  auto meta = kube::object_meta(parts->object);
  if (!meta) {
    *reason = "watch event without object metadata: " + std::string(raw.substr(0, 200));
    return net::EventVerdict::Failed;
  }
  if (parts->type == "BOOKMARK") {
    std::lock_guard lock(mutex_);
    resource_version_ = std::max(resource_version_, meta->resource_version);
    *resource_version = std::to_string(meta->resource_version);
    return net::EventVerdict::Ok;
  }
  CacheEvent::Type type;
  if (parts->type == "ADDED") {
    type = CacheEvent::Type::Added;
  } else if (parts->type == "MODIFIED") {
    type = CacheEvent::Type::Modified;
  } else if (parts->type == "DELETED") {
    type = CacheEvent::Type::Deleted;
  } else {
    *reason = "unexpected watch event type " + parts->type;
    return net::EventVerdict::Failed;
  }
  auto object = cached_object(parts->object);
  if (!object) {
    *reason = "watch event without a name: " + std::string(raw.substr(0, 200));
    return net::EventVerdict::Failed;
  }
  auto e = std::make_shared<CacheEvent>();
  // The apiserver's resourceVersions only grow; one that does not (a broken upstream) is placed
  // after what the cache holds, so the window stays in order.
  e->position = object->resource_version;
  auto shared = std::make_shared<const CachedObject>(std::move(*object));
  std::lock_guard lock(mutex_);
  ++received_;
  auto old = objects_.find(shared->key);
  if (old != objects_.end()) e->previous = old->second;
  // ADDED for an object the cache holds, or MODIFIED for one it does not, is told as what it is
  // for the cache's clients.
  if (type == CacheEvent::Type::Deleted) {
    if (old == objects_.end()) return net::EventVerdict::Ok;  // nothing a client was shown
    objects_.erase(old);
  } else {
    type = old == objects_.end() ? CacheEvent::Type::Added : CacheEvent::Type::Modified;
    objects_.insert_or_assign(shared->key, shared);
  }
  e->type = type;
  e->position = std::max(e->position, resource_version_);
  e->object = std::move(shared);
  resource_version_ = std::max(resource_version_, e->position);
  *resource_version = std::to_string(e->position);
  emit(e);
  return net::EventVerdict::Ok;
}

void WatchCache::events_done() {
  std::vector<std::shared_ptr<Subscription>> wake;
  {
    std::lock_guard lock(mutex_);
    trim_window();
    wake.swap(to_wake_);
  }
  for (const auto& s : wake) {
    if (s->wake_) s->wake_();
  }
}

std::uint64_t WatchCache::events_received() const {
  std::lock_guard lock(mutex_);
  return received_;
}

std::uint64_t WatchCache::events_delivered() const {
  std::lock_guard lock(mutex_);
  return delivered_;
}

std::size_t WatchCache::subscribers() const {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(
      std::count_if(subscriptions_.begin(), subscriptions_.end(),
                    [](const std::weak_ptr<Subscription>& s) { return !s.expired(); }));
}

}  // namespace yurthub::pool
