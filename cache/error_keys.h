// ErrorKeys: upstream YurtHub's "error keys" (pkg/yurthub/cachemanager/error_keys.go) for this
// cache: what the cache should hold but could not write. A key is one object of one list
// identity (or the list record itself, or a discovery document) whose latest write failed
// (refused object, failed group commit, dropped because the writer's queue was full) and was not
// written successfully since; a later successful write of it, a complete re-list of its identity
// or the eviction of that list removes it. Published as node_yurthub_error_keys_count; with
// node_yurthub_error_keys_persistency_status (1 while the last commit of the store succeeded) it
// is the cache's health that the Autonomy condition reports (NodeCache::health()).
// Unlike upstream the keys are not persisted: after a restart the cache re-lists anyway.
// Thread-safe: the writer thread and submit() (any thread) update it, the keeper reads it.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "base/metrics.h"

namespace yurthub::cache {

class ErrorKeys {
 public:
  // At most this many keys are remembered (bounded memory when everything fails); the count
  // stays at the bound until some are written again.
  static constexpr std::size_t kMaxKeys = 4096;

  explicit ErrorKeys(base::MetricsRegistry& registry);

  // The key of an object of a list identity (ListIdentity::key()), or of the identity itself
  // when `name` is empty.
  static std::string key(std::string_view identity, std::string_view namespace_name,
                         std::string_view name);

  void put(const std::string& key, std::string_view why);
  void erase(const std::string& key);
  // Forgets the identity's own key and those of all its objects (re-listed or evicted).
  void erase_identity(std::string_view identity);
  // The last commit of the store succeeded (true) or failed.
  void set_persisted(bool ok);

  std::size_t size() const;
  bool persisted() const;
  // For the Autonomy condition's message: the count and the first few keys, readably, with why.
  std::string summary() const;

 private:
  void publish();  // REQUIRES: mutex_ held

  base::Gauge& count_;
  base::Gauge& persistency_;
  mutable std::mutex mutex_;                 // guards keys_, persisted_
  std::map<std::string, std::string> keys_;  // key -> why its write failed
  bool persisted_ = true;
};

// The two gauges with their upstream names and help; registered once, by ErrorKeys or (when the
// cache could not be opened) by cmd/yurthub.cc, which sets them to 0.
base::GaugeFamily& error_keys_count_family(base::MetricsRegistry& registry);
base::GaugeFamily& error_keys_persistency_family(base::MetricsRegistry& registry);

}  // namespace yurthub::cache
