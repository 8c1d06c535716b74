// A relist that writes only what changed; see relists.h.
#include "cache/relists.h"

#include <vector>

#include "cache/cache_metrics.h"

namespace yurthub::cache {
namespace {

// How many changed objects finish() copies out of the staging set before writing them: the
// copies are bounded even when every item of a large list changed.
constexpr std::size_t kCopyChunk = 256;

std::string item_key(std::string_view namespace_name, std::string_view name) {
  std::string key;
  key.reserve(namespace_name.size() + 1 + name.size());
  key.append(namespace_name).push_back('\0');
  key.append(name);
  return key;
}

struct Changed {
  std::string namespace_name;
  std::string name;
  std::uint64_t resource_version = 0;
  std::string json;
};

// Copies the objects of `from` onto `into`, kCopyChunk at a time (a value read from the store is
// only valid until the transaction writes, so each chunk is copied out before it is written).
Status copy_set(WriteTxn& txn, std::uint32_t from, std::uint32_t into, std::size_t& copied) {
  std::vector<Changed> chunk;
  std::string after_namespace;
  std::string after_name;
  do {
    chunk.clear();
    txn.scan(from, "", after_namespace, after_name,
             [&](std::string_view ns, std::string_view name, const StoredObject& object) {
               chunk.push_back({std::string(ns), std::string(name), object.resource_version,
                                std::string(object.json)});
               return chunk.size() < kCopyChunk;
             });
    for (const Changed& c : chunk) {
      Status put = txn.put_object(into, c.namespace_name, c.name, c.resource_version, c.json);
      if (!put) return put;
    }
    copied += chunk.size();
    if (!chunk.empty()) {
      after_namespace = chunk.back().namespace_name;
      after_name = chunk.back().name;
    }
  } while (chunk.size() == kCopyChunk);
  return {};
}

}  // namespace

void Relists::begin(std::uint32_t staging, std::uint32_t current) {
  relists_[staging] = Relist{current, {}};
}

std::uint32_t Relists::current(std::uint32_t staging) const {
  auto it = relists_.find(staging);
  return it == relists_.end() ? 0 : it->second.current;
}

Status Relists::put(WriteTxn& txn, std::uint32_t staging, std::string_view namespace_name,
                    std::string_view name, std::uint64_t resource_version, std::string_view json) {
  auto it = relists_.find(staging);
  if (it == relists_.end())
    return txn.put_object(staging, namespace_name, name, resource_version, json);
  Relist& relist = it->second;
  auto held = txn.peek_object(relist.current, namespace_name, name);
  if (!held || held->resource_version != resource_version || held->json != json) {
    if (Status put = txn.put_object(staging, namespace_name, name, resource_version, json); !put)
      return put;  // not named: finish() deletes the old object, as a swapped set would lack it
  } else {
    ++relist.unchanged;
  }
  relist.named.insert(item_key(namespace_name, name));
  return {};
}

Status Relists::finish(WriteTxn& txn, std::uint32_t staging) {
  auto it = relists_.find(staging);
  if (it == relists_.end()) return {};
  const Relist relist = std::move(it->second);
  relists_.erase(it);
  std::vector<std::pair<std::string, std::string>> gone;
  txn.scan_names(relist.current, [&](std::string_view ns, std::string_view name) {
    if (!relist.named.count(item_key(ns, name))) gone.emplace_back(ns, name);
    return true;
  });
  std::size_t written = 0;
  if (Status copied = copy_set(txn, staging, relist.current, written); !copied) return copied;
  for (const auto& [ns, name] : gone) {
    if (Status deleted = txn.delete_object(relist.current, ns, name); !deleted) return deleted;
  }
  metrics_.relisted_objects.with({"unchanged"}).inc(relist.unchanged);
  metrics_.relisted_objects.with({"written"}).inc(written);
  metrics_.relisted_objects.with({"removed"}).inc(gone.size());
  return txn.drop_set(staging);
}

}  // namespace yurthub::cache
