// In-memory storage; see store.h.
#include "test/fake_apiserver/store.h"

#include <algorithm>

#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake {

Store::Store(std::size_t history, std::uint64_t first_rv)
    : rv_(first_rv), history_limit_(history) {}

const StoredObject* Store::get(const std::string& resource, const std::string& ns,
                               const std::string& name) const {
  auto r = objects_.find(resource);
  if (r == objects_.end()) return nullptr;
  auto it = r->second.find(Key(ns, name));
  return it == r->second.end() ? nullptr : &it->second;
}

StoredObject Store::put(const std::string& resource, const std::string& ns, const std::string& name,
                        rapidjson::Document& doc) {
  std::uint64_t rv = ++rv_;
  set_meta_string(doc, "resourceVersion", std::to_string(rv));
  order_metadata(doc);
  StoredObject obj{std::make_shared<const std::string>(to_json(doc)), rv};
  Objects& objects = objects_[resource];
  auto it = objects.find(Key(ns, name));
  Event e{EventType::Added, rv, resource, ns, name, obj.json, nullptr};
  if (it != objects.end()) {
    e.type = EventType::Modified;
    e.prev = it->second.json;
    it->second = obj;
  } else {
    objects.emplace(Key(ns, name), obj);
  }
  record(std::move(e));
  return obj;
}

std::optional<StoredObject> Store::remove(const std::string& resource, const std::string& ns,
                                          const std::string& name) {
  auto r = objects_.find(resource);
  if (r == objects_.end()) return std::nullopt;
  auto it = r->second.find(Key(ns, name));
  if (it == r->second.end()) return std::nullopt;
  std::uint64_t rv = ++rv_;
  auto prev = it->second.json;
  r->second.erase(it);
  std::shared_ptr<const std::string> last = prev;
  auto doc = parse_json(*prev);
  if (doc && doc->IsObject()) {
    set_meta_string(*doc, "resourceVersion", std::to_string(rv));
    last = std::make_shared<const std::string>(to_json(*doc));
  }
  record(Event{EventType::Deleted, rv, resource, ns, name, last, prev});
  return StoredObject{last, rv};
}

void Store::record(Event event) {
  for (const auto& w : watchers_) w->offer(event);
  std::optional<Event> observed;
  if (observer_) observed = event;
  history_.push_back(std::move(event));
  while (history_.size() > history_limit_) {
    evicted_max_rv_ = history_.front().rv;
    history_.pop_front();
  }
  if (observed) observer_(*observed);
}

std::string Store::relative_key(const ListOptions& options, const Key& key) {
  // etcd keys are /registry/<resource>/<ns>/<name>; the token holds the part after the list's
  // prefix (pods-list-page1.body: "web-0" for a namespace list).
  if (!options.namespaced || !options.ns.empty()) return key.second;
  return key.first + "/" + key.second;
}

bool Store::matches(const ListOptions& options, const std::string& json) {
  bool no_labels = options.labels == nullptr || options.labels->empty();
  bool no_fields = options.fields == nullptr || options.fields->empty();
  if (no_labels && no_fields) return true;
  auto doc = parse_json(json);
  if (!doc || !doc->IsObject()) return false;
  if (!no_labels && !options.labels->matches(*doc)) return false;
  return no_fields || options.fields->matches(*doc);
}

ListResult Store::list(const ListOptions& options) const {
  ListResult result;
  result.rv = options.cont ? options.cont->rv : rv_;
  auto r = objects_.find(options.resource);
  if (r == objects_.end()) return result;
  const Objects& objects = r->second;
  auto it = options.ns.empty() ? objects.begin() : objects.lower_bound(Key(options.ns, ""));
  if (options.cont) {
    Key start(options.ns, options.cont->start);
    if (options.namespaced && options.ns.empty()) {
      auto slash = options.cont->start.find('/');
      start = Key(options.cont->start.substr(0, slash),
                  slash == std::string::npos ? "" : options.cont->start.substr(slash + 1));
    }
    it = objects.upper_bound(start);
  }
  bool selectors = (options.labels != nullptr && !options.labels->empty()) ||
                   (options.fields != nullptr && !options.fields->empty());
  const Key* last = nullptr;
  for (; it != objects.end(); ++it) {
    if (!options.ns.empty() && it->first.first != options.ns) break;
    if (!matches(options, *it->second.json)) continue;
    if (options.limit > 0 && result.items.size() == options.limit) {
      // One more match exists: this page gets a continue token.
      result.continue_token =
          encode_continue(ContinueToken{result.rv, relative_key(options, *last)});
      if (!selectors) {
        std::uint64_t remaining = 0;
        for (; it != objects.end(); ++it) {
          if (!options.ns.empty() && it->first.first != options.ns) break;
          ++remaining;
        }
        result.remaining = remaining;
      }
      break;
    }
    result.items.push_back(it->second.json);
    last = &it->first;
  }
  return result;
}

WatchStart Store::watch(WatchFilter filter, std::optional<std::uint64_t> from_rv,
                        std::size_t max_queue) {
  WatchStart start;
  if (from_rv && *from_rv < evicted_max_rv_) {
    start.expired = true;
    start.oldest = evicted_max_rv_;
    return start;
  }
  auto watcher = std::make_shared<Watcher>(std::move(filter), max_queue);
  const WatchFilter& f = watcher->filter();
  if (!from_rv) {
    ListOptions lo;
    lo.resource = f.resource;
    lo.ns = f.ns;
    lo.labels = &f.labels;
    lo.fields = &f.fields;
    auto r = objects_.find(f.resource);
    if (r != objects_.end()) {
      for (const auto& [key, obj] : r->second) {
        if (!f.ns.empty() && key.first != f.ns) continue;
        if (matches(lo, *obj.json))
          watcher->push_initial(WatchItem{EventType::Added, obj.json, obj.rv});
      }
    }
  } else {
    auto first = std::upper_bound(history_.begin(), history_.end(), *from_rv,
                                  [](std::uint64_t rv, const Event& e) { return rv < e.rv; });
    for (auto it = first; it != history_.end(); ++it) watcher->offer(*it, /*initial=*/true);
  }
  watchers_.push_back(watcher);
  start.watcher = std::move(watcher);
  return start;
}

void Store::unwatch(const std::shared_ptr<Watcher>& watcher) {
  watchers_.erase(std::remove(watchers_.begin(), watchers_.end(), watcher), watchers_.end());
}

void Store::close_all_watchers() {
  auto watchers = watchers_;  // close() may wake a coroutine that unwatches later, not now
  for (const auto& w : watchers) w->close();
}

}  // namespace yurthub::fake
