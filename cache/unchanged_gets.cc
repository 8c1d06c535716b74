// The memo of what GETs stored; see unchanged_gets.h.
#include "cache/unchanged_gets.h"

namespace yurthub::cache {

std::string UnchangedGets::key(std::string_view identity, std::string_view ns,
                               std::string_view name) {
  std::string key;
  key.reserve(identity.size() + ns.size() + name.size() + 2);
  key.append(identity).push_back('\0');
  key.append(ns).push_back('\0');
  key.append(name);
  return key;
}

bool UnchangedGets::unchanged(const std::string& key, std::string_view json) const {
  std::lock_guard lock(mutex_);
  const auto it = stored_.find(key);
  return it != stored_.end() && it->second == json;
}

void UnchangedGets::stored(std::string key, std::string_view json) {
  std::lock_guard lock(mutex_);
  erase_locked(key);
  if (json.size() > kMaxObjectBytes) return;
  const std::size_t bytes = key.size() + json.size();
  if (bytes_ + bytes > kMaxBytes) {
    stored_.clear();
    bytes_ = 0;
  }
  bytes_ += bytes;
  stored_.emplace(std::move(key), std::string(json));
}

void UnchangedGets::forget(const std::string& key) {
  std::lock_guard lock(mutex_);
  erase_locked(key);
}

void UnchangedGets::erase_locked(const std::string& key) {
  if (const auto it = stored_.find(key); it != stored_.end()) {
    bytes_ -= it->first.size() + it->second.size();
    stored_.erase(it);
  }
}

void UnchangedGets::forget_all() {
  std::lock_guard lock(mutex_);
  stored_.clear();
  bytes_ = 0;
}

std::size_t UnchangedGets::size() const {
  std::lock_guard lock(mutex_);
  return stored_.size();
}

}  // namespace yurthub::cache
