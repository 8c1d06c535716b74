// A relist that writes only what changed; see relists.h.
#include "cache/relists.h"

#include <algorithm>
#include <vector>

#include "cache/cache_metrics.h"

namespace yurthub::cache {
namespace {

void append_item_key(std::string_view namespace_name, std::string_view name, std::string& out) {
  out.append(namespace_name).push_back('\0');
  out.append(name);
}

// Copies the objects of `from` onto `into`. Each is read without the transaction's copy
// (peek_object) and copied once into `json` before it is written, since a value read from the
// store is valid only until the transaction writes.
Status copy_set(WriteTxn& txn, std::uint32_t from, std::uint32_t into, std::size_t& copied) {
  std::vector<std::pair<std::string, std::string>> names;
  txn.scan_names(from, [&](std::string_view ns, std::string_view name) {
    names.emplace_back(ns, name);
    return true;
  });
  std::string json;
  for (const auto& [ns, name] : names) {
    auto object = txn.peek_object(from, ns, name);
    if (!object) continue;  // an undecodable value (logged), skipped as scan() skips one
    json.assign(object->json);
    Status put = txn.put_object(into, ns, name, object->resource_version, json);
    if (!put) return put;
    ++copied;
  }
  return {};
}

}  // namespace

void Relists::NamedItems::add(std::string_view namespace_name, std::string_view name) {
  const std::size_t offset = text_.size();
  append_item_key(namespace_name, name, text_);
  spans_.emplace_back(offset, text_.size() - offset);
}

std::string_view Relists::NamedItems::key(const Span& span) const {
  return std::string_view(text_).substr(span.first, span.second);
}

void Relists::NamedItems::seal() {
  std::sort(spans_.begin(), spans_.end(),
            [this](const Span& a, const Span& b) { return key(a) < key(b); });
}

bool Relists::NamedItems::contains(std::string_view wanted) const {
  auto it =
      std::lower_bound(spans_.begin(), spans_.end(), wanted,
                       [this](const Span& span, std::string_view w) { return key(span) < w; });
  return it != spans_.end() && key(*it) == wanted;
}

void Relists::begin(std::uint32_t staging, std::uint32_t current) {
  relists_[staging] = Relist{current, {}, 0, {}};
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
  relist.named.add(namespace_name, name);
  if (!relist.removed.empty()) {
    std::string key;
    append_item_key(namespace_name, name, key);
    relist.removed.erase(key);
  }
  return {};
}

Status Relists::remove(WriteTxn& txn, std::uint32_t staging, std::string_view namespace_name,
                       std::string_view name) {
  if (txn.peek_object(staging, namespace_name, name)) {
    if (Status s = txn.delete_object(staging, namespace_name, name); !s) return s;
  }
  auto it = relists_.find(staging);
  if (it == relists_.end()) return {};
  std::string key;
  append_item_key(namespace_name, name, key);
  it->second.removed.insert(std::move(key));
  return {};
}

Status Relists::finish(WriteTxn& txn, std::uint32_t staging) {
  auto it = relists_.find(staging);
  if (it == relists_.end()) return {};
  Relist relist = std::move(it->second);
  relists_.erase(it);
  relist.named.seal();
  std::vector<std::pair<std::string, std::string>> gone;
  std::string key;
  txn.scan_names(relist.current, [&](std::string_view ns, std::string_view name) {
    key.clear();
    append_item_key(ns, name, key);
    if (!relist.named.contains(key) || relist.removed.count(key)) gone.emplace_back(ns, name);
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
