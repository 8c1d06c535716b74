// The cache's single writer thread and its group commits; see cache_writer.h.
#include "cache/cache_writer.h"

#include <malloc.h>

#include <algorithm>
#include <map>

#include "base/clock.h"
#include "base/log.h"
#include "base/thread_name.h"
#include "cache/list_identity.h"

namespace yurthub::cache {
namespace {

// Past this many bytes of batches, malloc_trim once the writer has been idle a while (see run()):
// five seconds, so that the lists of a burst reuse each other's memory rather than fault it in
// again (after a restart kubelet, kube-proxy, coredns and flannel list within seconds of each
// other; a list's pieces, 19 MiB for the bench's, are allocated on the worker, the client's
// critical path). The memory goes back five seconds after the last.
constexpr std::size_t kTrimAfterBytes = 4u << 20;
constexpr std::chrono::milliseconds kTrimWhenIdleFor{5000};

std::size_t op_bytes(const CacheOp& op) {
  return sizeof(CacheOp) + op.identity.size() + op.namespace_name.size() + op.name.size() +
         op.json.size() + op.item.size() + op.api_version.size();
}

// The error key (error_keys.h) of what `op` writes.
std::string error_key(const CacheOp& op) {
  switch (op.kind) {
    case OpKind::ListItem:
    case OpKind::ListRemove:
    case OpKind::Upsert:
    case OpKind::Delete:
      return ErrorKeys::key(op.identity, op.namespace_name, op.name);
    case OpKind::Discovery:
      return "discovery " + op.name;
    case OpKind::ListBegin:
    case OpKind::ListEnd:
    case OpKind::Bookmark:
      break;
  }
  return ErrorKeys::key(op.identity, "", "");
}

}  // namespace

struct CacheWriter::Batch {
  std::set<std::string> dirty;     // identities whose record changed in this transaction
  std::set<std::string> stale;     // identities marked stale in this transaction
  std::set<std::string> relisted;  // identities a complete list replaced in this transaction
  bool kept = false;  // upsert(): the op's object is what the store holds now (written or equal)
};

CacheWriter::CacheWriter(Store& store, CacheMetrics& metrics, Options options)
    : store_(store), metrics_(metrics), options_(options) {
  // Staging sets left by a list in progress when the hub died can never be finished: drop them.
  Status cleaned = store_.write([](WriteTxn& txn) -> Status {
    for (auto& [key, record] : txn.lists_with_prefix("")) {
      if (record.staging_id == 0) continue;
      if (Status s = txn.drop_set(record.staging_id); !s) return s;
      record.staging_id = 0;
      if (Status s = txn.put_list(key, record); !s) return s;
    }
    return {};
  });
  if (!cleaned)
    YH_LOG(Warning) << "cache: could not drop unfinished lists: " << cleaned.error().message;
  thread_ = std::thread([this] {
    base::name_this_thread("yh-cache-writer");
    run();
  });
}

CacheWriter::~CacheWriter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  interval_.notify_all();
  thread_.join();
}

bool CacheWriter::submit(std::vector<CacheOp> ops) {
  std::size_t bytes = 0;
  for (const auto& op : ops) bytes += op_bytes(op);
  {
    std::lock_guard lock(mutex_);
    if (!queue_.empty() && queue_bytes_ + bytes > options_.max_queue_bytes) {
      for (const auto& op : ops)
        metrics_.error_keys.put(error_key(op), "the writer's queue was full");
      return false;
    }
    enqueue(ops, bytes);
  }
  work_.notify_one();
  return true;
}

void CacheWriter::submit_control(std::vector<CacheOp> ops) {
  std::size_t bytes = 0;
  for (const auto& op : ops) bytes += op_bytes(op);
  {
    std::lock_guard lock(mutex_);
    enqueue(ops, bytes);
  }
  work_.notify_one();
}

// REQUIRES: mutex_ held.
void CacheWriter::enqueue(std::vector<CacheOp>& ops, std::size_t bytes) {
  for (auto& op : ops) queue_.push_back(std::move(op));
  queue_bytes_ += bytes;
  submitted_ += ops.size();
  metrics_.queue_bytes.with({}).set(static_cast<std::int64_t>(queue_bytes_));
  metrics_.pending_ops.with({}).set(static_cast<std::int64_t>(submitted_ - committed_));
}

void CacheWriter::mark_stale(const std::string& identity) {
  {
    std::lock_guard lock(mutex_);
    stale_.insert(identity);
    known_stale_.insert(identity);
  }
  work_.notify_one();
}

bool CacheWriter::known_stale(const std::string& identity) const {
  std::lock_guard lock(mutex_);
  return known_stale_.count(identity) > 0;
}

void CacheWriter::wait_tasks() {
  std::unique_lock lock(mutex_);
  committed_cv_.wait(lock, [&] { return tasks_.empty() && !tasks_running_; });
}

void CacheWriter::flush() {
  std::unique_lock lock(mutex_);
  const std::uint64_t target = submitted_;
  const bool marks_pending = !stale_.empty();
  work_.notify_one();
  committed_cv_.wait(lock,
                     [&] { return committed_ >= target && (!marks_pending || stale_.empty()); });
}

void CacheWriter::run_exclusive(Task task, std::function<void(Status)> done) {
  {
    std::lock_guard lock(mutex_);
    tasks_.emplace_back(std::move(task), std::move(done));
  }
  work_.notify_one();
  interval_.notify_one();
}

void CacheWriter::run() {
  auto last_commit = base::Clock::now() - options_.commit_interval;
  std::size_t untrimmed = 0;  // bytes of the batches committed since the last malloc_trim
  std::unique_lock lock(mutex_);
  const auto queued = [&] { return !queue_.empty() || !stale_.empty() || !tasks_.empty(); };
  const auto has_work = [&] { return stopping_ || queued(); };
  for (;;) {
    if (untrimmed > kTrimAfterBytes && !work_.wait_for(lock, kTrimWhenIdleFor, has_work)) {
      // Big lists passed through (allocated on the worker threads, freed here), and none since:
      // give the freed memory back to the system, or glibc keeps it in its arenas (tens of MB of
      // RSS for good). Not after each batch: a trim hands every free page back, so the next
      // list's pages fault in again, and each trim stops the other threads' CPUs to flush TLBs.
      lock.unlock();
      ::malloc_trim(0);
      lock.lock();
      untrimmed = 0;
    }
    work_.wait(lock, has_work);
    if (stopping_ && !queued()) break;
    // Group commit: at most one transaction per interval; what arrives meanwhile joins it. A
    // client waiting on a journaled write does not wait for the interval.
    // A relative wait: `due` is on base::Clock, which a test may have moved past the steady
    // clock that the condition variable would read an absolute time on (the same time_point type).
    const auto wait = last_commit + options_.commit_interval - base::Clock::now();
    if (!stopping_) interval_.wait_for(lock, wait, [&] { return stopping_ || !tasks_.empty(); });
    auto tasks = std::move(tasks_);
    tasks_.clear();
    tasks_running_ = !tasks.empty();
    std::vector<CacheOp> ops(std::make_move_iterator(queue_.begin()),
                             std::make_move_iterator(queue_.end()));
    queue_.clear();
    const std::size_t batch_bytes = queue_bytes_;
    queue_bytes_ = 0;
    std::set<std::string> stale = std::move(stale_);
    stale_.clear();
    const std::uint64_t upto = submitted_;
    metrics_.queue_bytes.with({}).set(0);
    lock.unlock();

    if (!ops.empty() || !stale.empty()) apply_batch(ops, stale);
    // An offline write may change what a GET stored (and a GET checked before this may still
    // skip: as if its answer had been applied before the task, which is the queue's order).
    if (!tasks.empty()) unchanged_gets_.forget_all();
    std::vector<CacheOp>().swap(ops);  // freed here, not under the lock below
    untrimmed += batch_bytes;
    for (auto& [task, done] : tasks) done(store_.write(task));
    last_commit = base::Clock::now();
    if (last_commit - last_size_refresh_ >= options_.size_refresh_interval) refresh_size_metrics();

    lock.lock();
    committed_ = upto;
    metrics_.pending_ops.with({}).set(static_cast<std::int64_t>(submitted_ - committed_));
    tasks_running_ = false;
    committed_cv_.notify_all();
  }
}

void CacheWriter::apply_batch(std::vector<CacheOp>& ops, const std::set<std::string>& stale) {
  const auto started = base::Clock::now();
  ++batch_seq_;
  Batch batch;
  std::vector<std::pair<std::size_t, std::string>> refused;  // op index, why
  std::vector<std::size_t> kept_gets;  // GET answers the store holds once this commits
  Status written = store_.write([&](WriteTxn& txn) -> Status {
    refused.clear();
    kept_gets.clear();
    for (const auto& identity : stale) {
      Status error;
      if (ListRecord* r = record(txn, identity, false, batch, error)) {
        r->stale = true;
        batch.dirty.insert(identity);
      }
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
      CacheOp& op = ops[i];
      batch.kept = false;
      Status applied = apply(txn, op, batch);
      if (applied && batch.kept && op.get_answer) kept_gets.push_back(i);
      if (applied) continue;
      refused.emplace_back(i, applied.error().message);
      // One object refused (e.g. a key over LMDB's limit): the rest of the batch still commits.
      YH_LOG(Warning) << "cache: " << applied.error().message;
      metrics_.failures.with({"object"}).inc();
      if (op.failed) op.failed->store(true);
      if (op.kind == OpKind::ListItem || op.kind == OpKind::ListRemove)
        failed_tokens_.insert(op.list_token);
      Status ignored;
      if (!op.identity.empty()) batch.stale.insert(op.identity);
      if (ListRecord* r = record(txn, op.identity, false, batch, ignored)) {
        r->stale = true;
        batch.dirty.insert(op.identity);
      }
    }
    for (const auto& identity : batch.dirty) {
      if (Status s = txn.put_list(identity, records_.at(identity)); !s) return s;
    }
    return {};
  });
  if (!written) {
    fail_batch(ops, written.error());
    // A full map fails every commit until something is dropped: check the bounds now.
    refresh_size_metrics();
    return;
  }
  {
    std::lock_guard lock(mutex_);
    for (const auto& identity : batch.relisted) known_stale_.erase(identity);
    known_stale_.insert(batch.stale.begin(), batch.stale.end());
  }
  record_error_keys(ops, refused, batch.relisted);
  remember_gets(ops, kept_gets);
  const std::chrono::duration<double> took = base::Clock::now() - started;
  metrics_.commit_duration.with({}).observe(took.count());
  metrics_.batches.with({}).inc();
  metrics_.ops.with({}).inc(ops.size());
}

Status CacheWriter::apply(WriteTxn& txn, CacheOp& op, Batch& batch) {
  // A list's items are written when its begin and end are, which note it.
  if (!op.identity.empty() && op.kind != OpKind::ListItem && op.kind != OpKind::ListRemove)
    last_written_[op.identity] = batch_seq_;
  switch (op.kind) {
    case OpKind::ListBegin:
      return list_begin(txn, op, batch);
    case OpKind::ListItem: {
      auto it = staging_.find(op.list_token);
      if (it == staging_.end() || it->second == 0) return {};  // a page that cannot be assembled
      auto& max_rv = token_max_rv_[op.list_token];
      max_rv = std::max(max_rv, op.resource_version);
      return relists_.put(txn, it->second, op.namespace_name, op.name, op.resource_version,
                          op.item_json());
    }
    case OpKind::ListRemove: {
      auto it = staging_.find(op.list_token);
      if (it == staging_.end() || it->second == 0) return {};
      return relists_.remove(txn, it->second, op.namespace_name, op.name);
    }
    case OpKind::ListEnd:
      return list_end(txn, op, batch);
    case OpKind::Upsert:
    case OpKind::Delete:
    case OpKind::Bookmark:
      return upsert(txn, op, batch);
    case OpKind::Discovery:
      return txn.put_discovery(op.name, op.json);
  }
  return {};
}

ListRecord* CacheWriter::record(WriteTxn& txn, const std::string& identity, bool create,
                                Batch& batch, Status& error) {
  if (auto it = records_.find(identity); it != records_.end()) return &it->second;
  std::optional<ListRecord> stored = txn.list(identity);
  if (!stored) {
    if (!create) return nullptr;
    auto set = txn.allocate_set();
    if (!set) {
      error = set.error();
      return nullptr;
    }
    stored = ListRecord{};
    stored->set_id = *set;
    batch.dirty.insert(identity);
  }
  return &records_.emplace(identity, *stored).first->second;
}

Status CacheWriter::list_begin(WriteTxn& txn, CacheOp& op, Batch& batch) {
  if (op.continuation) {
    // A later page: it belongs to the staging set its first page opened, if we saw that page.
    auto it = paginating_.find(op.identity);
    staging_[op.list_token] = it == paginating_.end() ? 0 : it->second;
    return {};
  }
  Status error;
  ListRecord* r = record(txn, op.identity, true, batch, error);
  if (!r) return error;
  const bool in_use = std::any_of(staging_.begin(), staging_.end(),
                                  [&](const auto& entry) { return entry.second == r->staging_id; });
  if (r->staging_id != 0 && !in_use) {
    // An earlier list of this identity that never finished (abandoned pagination).
    if (Status s = drop_staging(txn, r->staging_id); !s) return s;
  }
  auto set = txn.allocate_set();
  if (!set) return set.error();
  // Over a complete list, the staging set takes only what changed (relists.h).
  if (r->complete && r->set_id != 0) relists_.begin(*set, r->set_id);
  r->staging_id = *set;
  r->list_kind = op.json;
  r->api_version = op.api_version;
  batch.dirty.insert(op.identity);
  staging_[op.list_token] = *set;
  paginating_.erase(op.identity);
  return {};
}

Status CacheWriter::list_end(WriteTxn& txn, CacheOp& op, Batch& batch) {
  auto it = staging_.find(op.list_token);
  if (it == staging_.end()) return {};
  const std::uint32_t set = it->second;
  staging_.erase(it);
  const std::uint64_t max_item_rv = token_max_rv_[op.list_token];
  token_max_rv_.erase(op.list_token);
  const bool item_failed = failed_tokens_.erase(op.list_token) > 0;
  if (set == 0) return {};
  Status error;
  ListRecord* r = record(txn, op.identity, false, batch, error);
  if (!r) return drop_staging(txn, set);
  batch.dirty.insert(op.identity);
  if (!op.complete) {
    // A broken response: the identity keeps its previous, complete set.
    if (r->staging_id == set) r->staging_id = 0;
    if (paginating_.count(op.identity) && paginating_[op.identity] == set)
      paginating_.erase(op.identity);
    return drop_staging(txn, set);
  }
  if (!op.final_page) {
    paginating_[op.identity] = set;  // the next page (with its continue token) appends here
    return {};
  }
  const std::uint64_t listed_rv = std::max(op.resource_version, max_item_rv);
  const bool older =
      op.names_version && r->complete && r->set_id != 0 && listed_rv < r->resource_version;
  // A relist whose current set is no longer the identity's (never expected: a list being
  // assembled is never evicted) holds only what changed, so it cannot become the set.
  const bool orphaned = relists_.diffs(set) && relists_.current(set) != r->set_id;
  if (older || orphaned) {
    // `resourceVersion=<old>` with Exact, a paginated list or a continue token: the apiserver
    // answers with that past snapshot. It never replaces the newer set kubelet is served offline.
    if (r->staging_id == set) r->staging_id = 0;
    paginating_.erase(op.identity);
    if (older) metrics_.older_lists.with({}).inc();
    return drop_staging(txn, set);
  }
  if (r->staging_id == set) r->staging_id = 0;
  const std::uint32_t old = r->set_id;
  if (relists_.diffs(set)) {
    if (Status s = relists_.finish(txn, set); !s) return s;
  } else {
    r->set_id = set;
  }
  r->resource_version = listed_rv;
  r->complete = true;
  r->stale = item_failed;  // a list missing an object is stale until the next full list
  if (!item_failed) batch.relisted.insert(op.identity);
  r->synced_unix = base::WallClock::unix_seconds();
  paginating_.erase(op.identity);
  if (old != 0 && old != r->set_id) return txn.drop_set(old);
  return {};
}

Status CacheWriter::drop_staging(WriteTxn& txn, std::uint32_t set) {
  relists_.forget(set);
  return txn.drop_set(set);
}

Status CacheWriter::upsert(WriteTxn& txn, CacheOp& op, Batch& batch) {
  Status error;
  ListRecord* r = record(txn, op.identity, op.kind == OpKind::Upsert, batch, error);
  if (!r) return error;  // ok (nothing to delete or advance) unless creating failed
  if (op.resource_version > r->resource_version) {
    r->resource_version = op.resource_version;
    batch.dirty.insert(op.identity);
  }
  if (op.kind == OpKind::Bookmark) return {};
  auto existing = txn.peek_object(r->set_id, op.namespace_name, op.name);
  if (existing && existing->resource_version > op.resource_version) {
    metrics_.out_of_order.with({}).inc();  // resourceVersions only move forward
    return {};
  }
  if (op.kind == OpKind::Delete) {
    return existing ? txn.delete_object(r->set_id, op.namespace_name, op.name) : Status{};
  }
  // kubelet gets its node and its pods again and again: an object stored byte for byte as it
  // is now needs no write, and a batch of only those commits nothing (no fsync).
  if (existing && existing->resource_version == op.resource_version && existing->json == op.json) {
    batch.kept = true;
    return {};
  }
  Status put = txn.put_object(r->set_id, op.namespace_name, op.name, op.resource_version, op.json);
  batch.kept = put.ok();
  return put;
}

void CacheWriter::record_error_keys(const std::vector<CacheOp>& ops,
                                    const std::vector<std::pair<std::size_t, std::string>>& refused,
                                    const std::set<std::string>& relisted) {
  ErrorKeys& keys = metrics_.error_keys;
  keys.set_persisted(true);
  if (refused.empty() && keys.size() == 0) return;  // the usual case: nothing to look up
  auto next_refused = refused.begin();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (next_refused != refused.end() && next_refused->first == i) {
      keys.put(error_key(ops[i]), next_refused->second);
      ++next_refused;
    } else {
      keys.erase(error_key(ops[i]));
    }
  }
  // A complete list replaced the identity's objects: those it no longer has are gone for good.
  for (const auto& identity : relisted) keys.erase_identity(identity);
}

void CacheWriter::remember_gets(const std::vector<CacheOp>& ops,
                                const std::vector<std::size_t>& kept_gets) {
  auto next_kept = kept_gets.begin();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const CacheOp& op = ops[i];
    if (next_kept != kept_gets.end() && *next_kept == i) {
      unchanged_gets_.stored(UnchangedGets::key(op.identity, op.namespace_name, op.name), op.json);
      ++next_kept;
    } else if ((op.kind == OpKind::Upsert || op.kind == OpKind::Delete) &&
               ListIdentity::may_be_get_set_key(op.identity)) {
      // Anything else that wrote the object (a write's kept answer, an out-of-order GET): the
      // memo no longer says what the store holds. A list's or a watch's op writes another set,
      // which the memo never holds: no key to build, no lock to take, for each event.
      unchanged_gets_.forget(UnchangedGets::key(op.identity, op.namespace_name, op.name));
    }
  }
}

void CacheWriter::fail_batch(std::vector<CacheOp>& ops, const Error& why) {
  unchanged_gets_.forget_all();
  YH_LOG(Error) << "cache: a group commit of " << ops.size() << " operations failed ("
                << why.message << "); the lists involved are marked stale and will be re-listed";
  // A full cache (at --disk-cache-size-mb) is an operator's sizing decision; any other commit
  // failure is the disk's or the file's.
  metrics_.failures.with({why.code == ErrorCode::ResourceExhausted ? "full" : "commit"}).inc();
  // In-memory state may describe the aborted transaction: forget it and reload from the store.
  records_.clear();
  staging_.clear();
  relists_.clear();
  token_max_rv_.clear();
  paginating_.clear();
  failed_tokens_.clear();
  std::set<std::string> identities;
  metrics_.error_keys.set_persisted(false);
  for (auto& op : ops) {
    if (op.failed) op.failed->store(true);
    if (!op.identity.empty()) identities.insert(op.identity);
    metrics_.error_keys.put(error_key(op), why.message);
  }
  {
    std::lock_guard lock(mutex_);
    known_stale_.insert(identities.begin(), identities.end());
  }
  Status marked = store_.write([&](WriteTxn& txn) -> Status {
    for (const auto& identity : identities) {
      auto r = txn.list(identity);
      if (!r) continue;
      r->stale = true;
      if (Status s = txn.put_list(identity, *r); !s) return s;
    }
    return {};
  });
  if (!marked) YH_LOG(Error) << "cache: could not mark lists stale: " << marked.error().message;
}

void CacheWriter::refresh_size_metrics() {
  last_size_refresh_ = base::Clock::now();
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> per_component;  // objects, bytes
  std::vector<ListUsage> lists;
  {
    auto view = store_.read();
    for (const auto& [key, record] : view->lists_with_prefix("")) {
      auto identity = ListIdentity::parse(key);
      if (!identity) continue;
      ListUsage usage{key, record, 0};
      auto& totals = per_component[identity->component];
      for (std::uint32_t set : {record.set_id, record.staging_id}) {
        if (set == 0) continue;
        view->scan(set, "", "", "",
                   [&](std::string_view, std::string_view, const StoredObject& object) {
                     ++totals.first;
                     totals.second += static_cast<std::int64_t>(object.json.size());
                     usage.bytes += object.json.size();
                     return true;
                   });
      }
      lists.push_back(std::move(usage));
    }
  }
  for (const auto& [component, totals] : per_component) {
    metrics_.objects.with({component}).set(totals.first);
    metrics_.bytes.with({component}).set(totals.second);
  }
  enforce_bounds(std::move(lists));
}

}  // namespace yurthub::cache
