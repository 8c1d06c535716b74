// The offline write journal's index, bounds and metrics; see journal.h. Used by OfflineWrites
// (appends, on worker threads through CacheWriter tasks), JournalReplay (removals) and the
// Forwarder through NodeCache::write_pending (lookups).
#include "cache/journal.h"

#include "base/log.h"

namespace yurthub::cache {

const char* drop_reason_label(DropReason reason) {
  switch (reason) {
    case DropReason::Rejected:
      return "rejected";
    case DropReason::Conflict:
      return "conflict";
    case DropReason::Undecodable:
      return "undecodable";
    case DropReason::EventBound:
      return "event_bound";
    case DropReason::Forbidden:
      return "forbidden";
    case DropReason::Unauthorized:
      return "unauthorized";
  }
  return "unknown";
}

std::string journal_object_key(std::string_view group, std::string_view version,
                               std::string_view resource, std::string_view namespace_name,
                               std::string_view name) {
  std::string key;
  for (std::string_view part : {group, version, resource, namespace_name}) (key += part) += '/';
  return key += name;
}

Journal::Journal(base::MetricsRegistry& r, JournalLimits limits)
    : limits_(limits),
      entries_gauge_(r.gauge("node_yurthub_journal_entries",
                             "Offline writes waiting in the journal to be replayed.", {})),
      bytes_gauge_(r.gauge("node_yurthub_journal_bytes", "Bytes of the journal's entries.", {})),
      oldest_gauge_(r.gauge("node_yurthub_journal_oldest_entry_timestamp_seconds",
                            "When the oldest journal entry was written (0: empty).", {})),
      appended_(r.counter("node_yurthub_journal_appended_total",
                          "Offline writes journaled, by kind (patch, update, event).", {"kind"})),
      removed_(r.counter("node_yurthub_journal_removed_total",
                         "Entries that left the journal: replayed, or dropped with a reason "
                         "(rejected, conflict, forbidden, unauthorized, undecodable, event_bound).",
                         {"outcome"})),
      conflicts_merged_(r.counter("node_yurthub_journal_conflicts_merged_total",
                                  "Offline updates replayed as a three-way merge onto a newer "
                                  "cloud object.",
                                  {})),
      retries_(r.counter("node_yurthub_journal_replay_retries_total",
                         "Replay attempts to retry later, by cause (network, 5xx, 429, 409).",
                         {"cause"})),
      refused_(r.counter("node_yurthub_journal_refused_total",
                         "Offline writes answered with an error instead of being journaled, by "
                         "reason (full, invalid, not_cached, ...).",
                         {"reason"})) {
  update_gauges_locked();
}

void Journal::load(ReadView& view) {
  std::lock_guard lock(mutex_);
  view.scan_journal([&](std::uint64_t seq, std::string_view bytes) {
    Info info;
    if (auto entry = decode_journal_entry(seq, bytes)) {
      info.object = entry->object;
      info.bytes = journal_entry_bytes(*entry);
      info.created_unix = entry->created_unix;
      info.is_event = entry->method == "POST";
      info.privileged_peer = entry->privileged_peer;
    } else {
      YH_LOG(Error) << "journal: entry " << seq << " cannot be read; it will be dropped";
      info.bytes = bytes.size();
    }
    add_locked(seq, std::move(info));
    return true;
  });
  if (!entries_.empty()) {
    YH_LOG(Info) << "journal: " << entries_.size() << " offline writes wait to be replayed";
  }
  update_gauges_locked();
}

Result<Journal::Append> Journal::stage_append(WriteTxn& txn, JournalEntry entry, bool is_event) {
  const std::size_t bytes = journal_entry_bytes(entry);
  Append append;
  {
    std::lock_guard lock(mutex_);
    if (is_event) {
      std::size_t events = events_;
      for (auto& [seq, info] : entries_) {
        if (events < limits_.max_events) break;
        if (info.is_event && !info.evicting) {
          append.evicted.push_back(seq);
          --events;
        }
      }
    }
    const std::size_t entries = entries_.size() + staged_entries_ - append.evicted.size();
    if (entries + 1 > limits_.max_entries || bytes_ + staged_bytes_ + bytes > limits_.max_bytes) {
      return make_error("journal: " + std::to_string(entries_.size()) + " entries, " +
                        std::to_string(bytes_) + " bytes (bounds " +
                        std::to_string(limits_.max_entries) + " entries, " +
                        std::to_string(limits_.max_bytes) + " bytes)");
    }
    if (!entry.privileged_peer) {
      const auto share_entries =
          static_cast<std::size_t>(static_cast<double>(limits_.max_entries) * limits_.others_share);
      const auto share_bytes =
          static_cast<std::uint64_t>(static_cast<double>(limits_.max_bytes) * limits_.others_share);
      if (others_.entries + 1 > share_entries || others_.bytes + bytes > share_bytes) {
        return make_error(
            "journal: callers other than root on the node have filled their share "
            "of it (" +
            std::to_string(others_.entries) + " entries, " + std::to_string(others_.bytes) +
            " bytes); the rest is kept for kubelet's writes");
      }
      ++others_.entries;
      others_.bytes += bytes;
    }
    for (std::uint64_t seq : append.evicted) entries_[seq].evicting = true;
    entry.seq = next_seq_++;
    ++staged_entries_;
    staged_bytes_ += bytes;
  }
  append.entry = std::move(entry);
  Status written;
  for (std::uint64_t seq : append.evicted) {
    if (written = txn.delete_journal(seq); !written) break;
  }
  if (written) written = txn.put_journal(append.entry.seq, encode_journal_entry(append.entry));
  if (!written) {
    abort_append(append);
    return written.error();
  }
  return append;
}

void Journal::commit_append(const Append& append) {
  for (std::uint64_t seq : append.evicted)
    commit_remove(seq, drop_reason_label(DropReason::EventBound));
  const JournalEntry& e = append.entry;
  std::lock_guard lock(mutex_);
  --staged_entries_;
  staged_bytes_ -= journal_entry_bytes(e);
  if (!e.privileged_peer) {  // counted in others_ since staged: add_locked counts it again
    --others_.entries;
    others_.bytes -= journal_entry_bytes(e);
  }
  add_locked(e.seq, Info{e.object, journal_entry_bytes(e), e.created_unix, e.method == "POST",
                         false, e.privileged_peer});
  appended_.with({e.method == "POST" ? "event" : e.method == "PUT" ? "update" : "patch"}).inc();
  update_gauges_locked();
}

void Journal::abort_append(const Append& append) {
  std::lock_guard lock(mutex_);
  --staged_entries_;
  staged_bytes_ -= journal_entry_bytes(append.entry);
  if (!append.entry.privileged_peer) {
    --others_.entries;
    others_.bytes -= journal_entry_bytes(append.entry);
  }
  for (std::uint64_t seq : append.evicted) {
    if (auto it = entries_.find(seq); it != entries_.end()) it->second.evicting = false;
  }
}

void Journal::commit_remove(std::uint64_t seq, const char* outcome) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(seq);
  if (it == entries_.end()) return;
  bytes_ -= it->second.bytes;
  if (it->second.is_event) --events_;
  if (!it->second.privileged_peer) {
    --others_.entries;
    others_.bytes -= it->second.bytes;
  }
  if (auto object = per_object_.find(it->second.object); object != per_object_.end()) {
    if (--object->second == 0) per_object_.erase(object);
  }
  entries_.erase(it);
  removed_.with({outcome}).inc();
  update_gauges_locked();
}

bool Journal::pending(std::string_view object) const {
  std::lock_guard lock(mutex_);
  return per_object_.contains(std::string(object));
}

bool Journal::empty() const {
  std::lock_guard lock(mutex_);
  return entries_.empty();
}

std::size_t Journal::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

void Journal::add_locked(std::uint64_t seq, Info info) {
  bytes_ += info.bytes;
  if (info.is_event) ++events_;
  if (!info.privileged_peer) {
    ++others_.entries;
    others_.bytes += info.bytes;
  }
  ++per_object_[info.object];
  entries_.emplace(seq, std::move(info));
  if (seq >= next_seq_) next_seq_ = seq + 1;
}

void Journal::update_gauges_locked() {
  entries_gauge_.with({}).set(static_cast<std::int64_t>(entries_.size()));
  bytes_gauge_.with({}).set(static_cast<std::int64_t>(bytes_));
  oldest_gauge_.with({}).set(entries_.empty() ? 0 : entries_.begin()->second.created_unix);
}

}  // namespace yurthub::cache
