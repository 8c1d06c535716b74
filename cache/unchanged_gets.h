// UnchangedGets: the bytes the cache last stored for each object a GET fed it, so that a GET
// answered again with the same bytes (kubelet gets its node and its pods again and again) is
// known to be cached already without reading its metadata, queueing it for the CacheWriter and
// comparing it with the stored copy there: about a seventh of a cached small GET's instructions.
// Exact: an entry holds the whole stored text and is compared byte for byte. Bounded: objects
// past kMaxObjectBytes are not remembered, and the memo starts over past kMaxBytes.
// Owned by the CacheWriter, which records what it committed and forgets what anything else may
// have changed (offline writes, eviction, a failed commit); read by the GET taps on the worker
// threads (cache/response_taps.cc). Thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace yurthub::cache {

class UnchangedGets {
 public:
  static constexpr std::size_t kMaxObjectBytes = 64 * 1024;
  static constexpr std::size_t kMaxBytes = 1024 * 1024;

  // The entry of object `name` in namespace `ns` of the GET set `identity` (ListIdentity::key()).
  static std::string key(std::string_view identity, std::string_view ns, std::string_view name);

  // The cache holds exactly `json` for `key`, as last committed.
  bool unchanged(const std::string& key, std::string_view json) const;
  // The writer committed `json` as what the cache holds for `key`.
  void stored(std::string key, std::string_view json);
  // Something else wrote the object at `key` (or failed to): its bytes are not known any more.
  void forget(const std::string& key);
  // Something else may have changed what the cache holds (an offline write, an eviction, a commit
  // that failed): nothing is known unchanged any more.
  void forget_all();
  std::size_t size() const;

 private:
  void erase_locked(const std::string& key);  // REQUIRES: mutex_ held

  mutable std::mutex mutex_;
  std::map<std::string, std::string, std::less<>> stored_;  // guarded by mutex_
  std::size_t bytes_ = 0;                                   // guarded by mutex_
};

}  // namespace yurthub::cache
