// Relists: a list of an identity whose set already holds a complete list writes only what
// changed. kubelet, kube-proxy and coredns list again after every restart and every expired
// watch, and between two lists most objects are the same, byte for byte: writing each into a
// fresh set and dropping the old one rewrote the whole list (each ~2 KB pod a 4 KiB LMDB page).
//
// How: an item that the current set holds at the same resourceVersion with the same bytes is only
// named; any other goes into the list's staging set. When the list's last page arrives whole,
// one transaction copies the staging set's objects onto the current set, deletes the current
// objects the list did not name, and drops the staging set. Until then the current set is never
// touched, so a list cut short leaves it as it was, as a swapped-in staging set would.
//
// Used by CacheWriter (cache_writer.cc) on its thread only; one entry per staging set, so the
// pages of a paginated list share theirs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/result.h"
#include "cache/store.h"

namespace yurthub::cache {

struct CacheMetrics;

class Relists {
 public:
  explicit Relists(CacheMetrics& metrics) : metrics_(metrics) {}

  // The list being assembled in `staging` will replace the objects of the complete set `current`.
  void begin(std::uint32_t staging, std::uint32_t current);
  // Whether `staging` holds only what differs from a current set (begin() was called for it).
  bool diffs(std::uint32_t staging) const { return relists_.count(staging) != 0; }
  // The set `staging` is diffed against (0 when diffs() is false).
  std::uint32_t current(std::uint32_t staging) const;
  // One item of the list: written into `staging` unless the current set holds it already.
  Status put(WriteTxn& txn, std::uint32_t staging, std::string_view namespace_name,
             std::string_view name, std::uint64_t resource_version, std::string_view json);
  // An item put() before leaves the list again (a streaming list's DELETED before its end): it
  // is not in `staging`, and finish() deletes it from the current set, unless put() again after.
  Status remove(WriteTxn& txn, std::uint32_t staging, std::string_view namespace_name,
                std::string_view name);
  // The list's last page arrived whole: the current set becomes exactly the list's items, and
  // `staging` is dropped.
  Status finish(WriteTxn& txn, std::uint32_t staging);
  // The list of `staging` ended any other way (the caller drops the set).
  void forget(std::uint32_t staging) { relists_.erase(staging); }
  // The transaction that wrote the relists' items failed.
  void clear() { relists_.clear(); }

 private:
  // The items a relist has named so far, as namespace '\0' name, one after another in one
  // string: a 10,000-pod list made 10,000 allocations and hashed each name into a set.
  class NamedItems {
   public:
    void add(std::string_view namespace_name, std::string_view name);
    // Sorts the names once, after the last add(); contains() is valid from then on.
    void seal();
    bool contains(std::string_view key) const;

   private:
    using Span = std::pair<std::size_t, std::size_t>;  // offset, length in text_
    std::string_view key(const Span& span) const;

    std::string text_;
    std::vector<Span> spans_;
  };
  struct Relist {
    std::uint32_t current = 0;
    NamedItems named;
    std::size_t unchanged = 0;  // items the current set held already
    // Items named, then removed (remove()) and not named again: rare, so a plain set.
    std::set<std::string> removed;
  };
  CacheMetrics& metrics_;
  std::unordered_map<std::uint32_t, Relist> relists_;  // staging set -> its relist
};

}  // namespace yurthub::cache
