// The fake apiserver's in-memory storage: objects keyed by (resource, namespace, name), one global
// resourceVersion counter (strictly increasing across all writes, like etcd's revision), a ring of
// the last `history` events for watches that resume from a resourceVersion, and the registry of
// live watchers. Objects are kept as compact JSON without kind/apiVersion, shared (not copied)
// between the object map, the history and watch queues. Knows nothing about HTTP.
// Single-threaded: owned by the server's io_context thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "base/result.h"
#include "test/fake_apiserver/continue_token.h"
#include "test/fake_apiserver/selectors.h"
#include "test/fake_apiserver/watcher.h"

namespace yurthub::fake {

struct StoredObject {
  std::shared_ptr<const std::string> json;  // without kind/apiVersion
  std::uint64_t rv = 0;
};

struct ListOptions {
  std::string resource;    // ResourceInfo::key()
  std::string ns;          // "" = all namespaces (or a cluster-scoped resource)
  bool namespaced = true;  // the resource is namespaced (decides the continue key form)
  const LabelSelector* labels = nullptr;
  const FieldSelector* fields = nullptr;
  std::size_t limit = 0;  // 0 = no limit
  std::optional<ContinueToken> cont;
};

struct ListResult {
  std::vector<std::shared_ptr<const std::string>> items;  // sorted by namespace, then name
  std::uint64_t rv = 0;
  std::string continue_token;              // "" on the last page
  std::optional<std::uint64_t> remaining;  // remainingItemCount (only without selectors)
};

struct WatchStart {
  std::shared_ptr<Watcher> watcher;  // null if expired
  bool expired = false;
  std::uint64_t oldest = 0;  // the oldest resourceVersion a watch may still start from
};

class Store {
 public:
  // `history`: events kept for resuming watches. The first write gets `first_rv` + 1.
  explicit Store(std::size_t history, std::uint64_t first_rv = 100);

  std::uint64_t current_rv() const { return rv_; }

  // nullptr if absent.
  const StoredObject* get(const std::string& resource, const std::string& ns,
                          const std::string& name) const;

  // Creates or replaces the object, stamping doc's metadata.resourceVersion with the new
  // resourceVersion; records ADDED or MODIFIED and offers it to watchers.
  // REQUIRES: doc is an object without kind/apiVersion.
  StoredObject put(const std::string& resource, const std::string& ns, const std::string& name,
                   rapidjson::Document& doc);

  // Removes the object; returns its last state stamped with the deletion's resourceVersion, and
  // records DELETED. nullopt if absent.
  std::optional<StoredObject> remove(const std::string& resource, const std::string& ns,
                                     const std::string& name);

  ListResult list(const ListOptions& options) const;

  // Starts a watch from `from_rv` (nullopt: resourceVersion "" or "0", i.e. synthetic ADDED for
  // every current match first). The returned watcher already holds its initial events and is
  // registered; the caller must unwatch() it when done.
  WatchStart watch(WatchFilter filter, std::optional<std::uint64_t> from_rv, std::size_t max_queue);
  void unwatch(const std::shared_ptr<Watcher>& watcher);
  // Closes every watcher (server shutdown).
  void close_all_watchers();
  std::size_t watcher_count() const { return watchers_.size(); }

  // Called with every committed change, after the watchers were offered it: the fake's
  // controllers (controllers.h) react here. The observer may write, which calls it again from
  // inside put()/remove(); it must not keep pointers from get() across its own writes.
  void set_observer(std::function<void(const Event&)> observer) { observer_ = std::move(observer); }

 private:
  using Key = std::pair<std::string, std::string>;  // (namespace, name)
  using Objects = std::map<Key, StoredObject>;

  void record(Event event);
  // The continue key's relative form for `key` in a list scoped like `options`.
  static std::string relative_key(const ListOptions& options, const Key& key);
  static bool matches(const ListOptions& options, const std::string& json);

  std::uint64_t rv_;
  std::size_t history_limit_;
  std::deque<Event> history_;
  std::uint64_t evicted_max_rv_ = 0;        // highest resourceVersion dropped from history_
  std::map<std::string, Objects> objects_;  // by ResourceInfo::key()
  std::vector<std::shared_ptr<Watcher>> watchers_;
  std::function<void(const Event&)> observer_;
};

}  // namespace yurthub::fake
