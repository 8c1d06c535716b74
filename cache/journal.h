// Journal: the offline write journal's index and bounds (docs/offline-semantics.md, "Journal").
// The entries themselves live in the store (database "journal", journal_entry.h); this keeps
// what every request needs at once in memory: which objects have entries waiting (a new write to
// such an object must wait for their replay), the totals against the bounds, and the metrics.
//
// Entries are added and removed only in CacheWriter tasks (the writer thread), in two steps:
// stage_*() inside the task's transaction, then commit_*() once that transaction committed, or
// abort_append() if it did not. A staged append holds its sequence number and its share of the
// bounds at once: the writer runs the next task before the first one's client resumes, and two
// writes given one number would overwrite each other after both were acknowledged.
// Everything else is thread-safe (mutex_).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/metrics.h"
#include "base/result.h"
#include "cache/journal_entry.h"
#include "cache/store.h"

namespace yurthub::cache {

struct JournalLimits {
  std::size_t max_entries = 10000;
  std::uint64_t max_bytes = 64ull << 20;
  std::size_t max_events = 1000;  // event creates; past this the oldest event is dropped
  // Of each bound, what writes from callers other than root or the hub's user on the node
  // (JournalEntry::privileged_peer) may fill together: the rest is kept for kubelet.
  double others_share = 0.5;
};

// Why an entry left the journal without being taken by the cloud; the `reason` label of
// node_yurthub_journal_dropped_total.
enum class DropReason { Rejected, Conflict, Undecodable, EventBound, Forbidden, Unauthorized };
const char* drop_reason_label(DropReason reason);

class Journal {
 public:
  Journal(base::MetricsRegistry& registry, JournalLimits limits);

  // Rebuilds the index from the store (at startup). Undecodable entries are counted and left for
  // the replay to remove.
  void load(ReadView& view);

  // An append prepared in a transaction: the entry (seq assigned) and the events it evicts.
  struct Append {
    JournalEntry entry;
    std::vector<std::uint64_t> evicted;
  };
  // Writes `entry` into `txn` with the next sequence number. Event creates (`is_event`) evict the
  // oldest events past max_events; any other entry that would pass max_entries or max_bytes is
  // refused (the caller answers 503 and the rejection is counted).
  Result<Append> stage_append(WriteTxn& txn, JournalEntry entry, bool is_event);
  void commit_append(const Append& append);
  // The transaction of a staged append did not commit: releases what stage_append() held.
  void abort_append(const Append& append);
  // Forgets an entry once its deletion committed; `outcome` is "replayed" or a drop reason.
  void commit_remove(std::uint64_t seq, const char* outcome);

  bool pending(std::string_view object) const;
  bool empty() const;
  std::size_t size() const;

  // Counted by the replay.
  void count_conflict_merged() { conflicts_merged_.with({}).inc(); }
  void count_retry(const std::string& why) { retries_.with({why}).inc(); }
  void count_refused(const char* why) { refused_.with({why}).inc(); }

 private:
  struct Info {
    std::string object;
    std::size_t bytes = 0;
    std::int64_t created_unix = 0;
    bool is_event = false;
    bool evicting = false;  // a staged event append drops it once that append commits
    bool privileged_peer = true;
  };
  // Entries and bytes, of the whole journal or of the other callers' share.
  struct Usage {
    std::size_t entries = 0;
    std::uint64_t bytes = 0;
  };
  void add_locked(std::uint64_t seq, Info info);
  void update_gauges_locked();

  JournalLimits limits_;
  base::GaugeFamily& entries_gauge_;
  base::GaugeFamily& bytes_gauge_;
  base::GaugeFamily& oldest_gauge_;
  base::CounterFamily& appended_;
  base::CounterFamily& removed_;
  base::CounterFamily& conflicts_merged_;
  base::CounterFamily& retries_;
  base::CounterFamily& refused_;

  mutable std::mutex mutex_;  // guards everything below
  std::map<std::uint64_t, Info> entries_;
  std::unordered_map<std::string, std::size_t> per_object_;
  std::uint64_t bytes_ = 0;
  std::size_t events_ = 0;
  std::uint64_t next_seq_ = 1;
  // Appends staged and not yet committed or aborted: they count against the bounds.
  std::size_t staged_entries_ = 0;
  std::uint64_t staged_bytes_ = 0;
  // Of the above (committed and staged), what callers other than root or the hub's user wrote.
  Usage others_;
};

// "group/version/resource/namespace/name" ("" group for core): the key entries of one object
// replay in order under.
std::string journal_object_key(std::string_view group, std::string_view version,
                               std::string_view resource, std::string_view namespace_name,
                               std::string_view name);

}  // namespace yurthub::cache
