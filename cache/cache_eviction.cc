// The cache's bounds: at most Options::max_lists lists, and at most high_water of the map size
// in use (then down to low_water); least recently written lists go first. Part of CacheWriter
// (cache_writer.h), on its thread: called with every list's usage after the minute's size
// refresh and after a commit that failed (a full map fails every commit until space is freed).
#include <algorithm>

#include "base/log.h"
#include "cache/cache_writer.h"

namespace yurthub::cache {

void CacheWriter::enforce_bounds(std::vector<ListUsage> lists) {
  const StoreStats stats = store_.stats();
  const auto high =
      static_cast<std::uint64_t>(static_cast<double>(stats.map_size) * options_.high_water);
  const auto low =
      static_cast<std::uint64_t>(static_cast<double>(stats.map_size) * options_.low_water);
  const bool over_size = stats.map_size > 0 && stats.used_bytes > high;
  if (lists.size() <= options_.max_lists && !over_size) return;

  // Least recently written first: lists this process never wrote to (by their last full list),
  // then the others by the batch that last wrote to them.
  auto last = [&](const ListUsage& u) {
    auto it = last_written_.find(u.key);
    return it != last_written_.end()
               ? std::pair<int, std::int64_t>(1, static_cast<std::int64_t>(it->second))
               : std::pair<int, std::int64_t>(0, u.record.synced_unix);
  };
  std::sort(lists.begin(), lists.end(),
            [&](const ListUsage& a, const ListUsage& b) { return last(a) < last(b); });
  std::size_t count = lists.size();
  std::uint64_t used = stats.used_bytes;
  std::vector<const ListUsage*> doomed;
  std::uint64_t count_evictions = 0, size_evictions = 0;
  for (const ListUsage& u : lists) {
    const bool too_many = count > options_.max_lists;
    const bool too_big = over_size && used > low;
    if (!too_many && !too_big) break;
    // A list being assembled (its staging set is in use) stays.
    if (paginating_.count(u.key) != 0 || u.record.staging_id != 0) continue;
    doomed.push_back(&u);
    --count;
    used -= std::min(used, u.bytes);
    ++(too_many ? count_evictions : size_evictions);
  }
  if (doomed.empty()) return;
  Status dropped = drop_lists(doomed);
  if (!dropped) {
    YH_LOG(Error) << "cache: cannot drop " << doomed.size()
                  << " least recently written lists to stay within bounds: "
                  << dropped.error().message;
    return;
  }
  for (const ListUsage* u : doomed) {
    records_.erase(u->key);
    last_written_.erase(u->key);
    metrics_.error_keys.erase_identity(u->key);  // its objects are no longer meant to be cached
  }
  if (count_evictions) metrics_.evicted.with({"count"}).inc(count_evictions);
  if (size_evictions) metrics_.evicted.with({"size"}).inc(size_evictions);
  YH_LOG(Warning) << "cache: dropped the " << doomed.size() << " least recently written lists ("
                  << lists.size() << " lists, " << stats.used_bytes << " of " << stats.map_size
                  << " bytes in use; bounds " << options_.max_lists << " lists, "
                  << static_cast<int>(options_.high_water * 100) << "% of the map)";
}

Status CacheWriter::drop_lists(const std::vector<const ListUsage*>& doomed) {
  unchanged_gets_.forget_all();  // a dropped get set no longer holds what the GETs stored
  return store_.write([&](WriteTxn& txn) -> Status {
    for (const ListUsage* u : doomed) {
      for (std::uint32_t set : {u->record.set_id, u->record.staging_id}) {
        if (set == 0) continue;
        if (Status s = txn.drop_set(set); !s) return s;
      }
      if (Status s = txn.delete_list(u->key); !s) return s;
    }
    return {};
  });
}

}  // namespace yurthub::cache
