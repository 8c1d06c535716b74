// CacheWriter: the only writer of the Store. Response taps (on the worker threads) submit
// operations; one writer thread applies everything queued in one write transaction per batch (a
// group commit at most every `commit_interval`, durable when committed), so clients are never
// slowed by the disk and many watch events share one fsync.
//
// What the operations do (docs/offline-semantics.md):
//   - A list response is assembled in a fresh staging set (across pages, for limit/continue) and
//     swapped in as the identity's set in one transaction when its last page arrives whole; the
//     old set is dropped in the same transaction. Over a complete list, the staging set takes
//     only the objects that changed, and is applied onto the set instead (relists.h). A broken
//     response leaves the old set untouched.
//   - Watch events and GETs update the identity's current set in order; an object's
//     resourceVersion never moves backwards; bookmarks advance the list's resourceVersion.
//   - Nothing fails silently: an operation that cannot be written (queue full, object refused,
//     commit failed) is logged and counted, marks its list stale, and sets the submitting tap's
//     failure flag so the hub makes the client re-list.
//
// Thread-safety: submit() and flush() from any thread; everything else is the writer thread's.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cache/cache_metrics.h"
#include "cache/relists.h"
#include "cache/store.h"
#include "cache/unchanged_gets.h"

namespace yurthub::cache {

enum class OpKind : std::uint8_t {
  ListBegin,   // a list response starts (identity, list_token, continuation, json = list kind)
  ListItem,    // one item of it (list_token, namespace/name/resourceVersion, json)
  ListRemove,  // an item leaves it again: a streaming list's DELETED before its end (list_token,
               // namespace/name)
  ListEnd,     // it ended (list_token, identity, resource_version, final_page, complete)
  Upsert,      // a watch ADDED/MODIFIED event or a GET response (identity, object)
  Delete,      // a watch DELETED event (identity, namespace/name/resourceVersion)
  Bookmark,    // a watch BOOKMARK (identity, resource_version)
  Discovery,   // a discovery document (name = path, json)
};

struct CacheOp {
  OpKind kind = OpKind::Upsert;
  std::string identity;  // ListIdentity::key()
  std::uint64_t list_token = 0;
  std::string namespace_name;
  std::string name;
  std::uint64_t resource_version = 0;
  std::string json;
  // ListItem: the item's bytes where the tap read them, in a piece of the body that `piece`
  // keeps alive (tap_queue.h), instead of a copy in `json`. See item_json().
  std::shared_ptr<const std::string> piece;
  std::string_view item;
  std::string api_version;     // ListBegin: the list's apiVersion
  bool continuation = false;   // ListBegin: the request carried a continue token
  bool final_page = false;     // ListEnd: the response had no continue token
  bool complete = false;       // ListEnd: the body arrived whole and was readable
  bool names_version = false;  // ListEnd: the request named its version (may be an old snapshot)
  bool get_answer = false;     // Upsert: a GET's answer (remembered in UnchangedGets once stored)
  std::shared_ptr<std::atomic<bool>> failed;  // set when this operation could not be written

  // A ListItem's JSON: in the shared piece, or copied.
  std::string_view item_json() const { return piece ? item : std::string_view(json); }
};

class CacheWriter {
 public:
  struct Options {
    std::chrono::milliseconds commit_interval{50};
    std::size_t max_queue_bytes = 64u << 20;
    // Bounds on what the cache keeps (cache_eviction.cc): every component's every selector is a
    // list of its own, so without them the cache only grows. Past either, the least recently
    // written lists are dropped, checked every minute and after a commit that failed.
    std::size_t max_lists = 1000;
    double high_water = 0.85;  // of the map size: evict down to low_water past it
    double low_water = 0.70;
    // How often the per-component size metrics are refreshed and the bounds checked.
    std::chrono::milliseconds size_refresh_interval{60000};
  };

  CacheWriter(Store& store, CacheMetrics& metrics, Options options);
  ~CacheWriter();  // commits what is queued, then stops the thread
  CacheWriter(const CacheWriter&) = delete;
  CacheWriter& operator=(const CacheWriter&) = delete;

  // Queues operations (in order). Returns false, queueing none of them, when the queue is over
  // its byte bound; the caller then marks its list stale with mark_stale().
  bool submit(std::vector<CacheOp> ops);
  // Queues small control operations (a list's ListEnd) regardless of the bound, so the writer
  // always learns that a list ended and never keeps its staging set alive.
  void submit_control(std::vector<CacheOp> ops);
  // Marks a list stale even when the queue is full (applied with the next batch).
  void mark_stale(const std::string& identity);
  // Runs `task` in a transaction of its own on the writer thread, as soon as the batch being
  // assembled is committed (it does not wait for the group-commit interval), then calls `done`
  // there with the outcome: ok only once the commit is durable. For the offline write journal,
  // whose client waits for its write. `done` must not block.
  using Task = std::function<Status(WriteTxn&)>;
  void run_exclusive(Task task, std::function<void(Status)> done);
  // Blocks until no task is queued or running: their `done` callbacks have run. Called before the
  // executors those callbacks post to are destroyed.
  void wait_tasks();
  // Blocks until everything submitted before the call is committed (or failed).
  void flush();
  // True when a write for this list failed since its last full list. Kept in memory as well as
  // in the store, because when the disk is full even writing the stale mark can fail.
  bool known_stale(const std::string& identity) const;
  // What the GETs stored, as last committed (the GET taps skip an answer stored already).
  const UnchangedGets& unchanged_gets() const { return unchanged_gets_; }
  // A token identifying one list response in ListBegin/ListItem/ListEnd operations.
  std::uint64_t new_list_token() { return next_token_.fetch_add(1) + 1; }

 private:
  struct Batch;
  void enqueue(std::vector<CacheOp>& ops, std::size_t bytes);
  void run();
  void apply_batch(std::vector<CacheOp>& ops, const std::set<std::string>& stale);
  Status apply(WriteTxn& txn, CacheOp& op, Batch& batch);
  Status list_begin(WriteTxn& txn, CacheOp& op, Batch& batch);
  Status list_end(WriteTxn& txn, CacheOp& op, Batch& batch);
  Status upsert(WriteTxn& txn, CacheOp& op, Batch& batch);
  // Drops a list's staging set (and its relist's state).
  Status drop_staging(WriteTxn& txn, std::uint32_t set);
  ListRecord* record(WriteTxn& txn, const std::string& identity, bool create, Batch& batch,
                     Status& error);
  void fail_batch(std::vector<CacheOp>& ops, const Error& why);
  // After a commit: the GET answers at `kept_gets` (indices into ops, ascending) are what the
  // store holds; any other object an op wrote is forgotten.
  void remember_gets(const std::vector<CacheOp>& ops, const std::vector<std::size_t>& kept_gets);
  // After a committed batch: `refused` ops (index, why; in index order) are error keys, the
  // others and the identities a complete list replaced are not (any more).
  void record_error_keys(const std::vector<CacheOp>& ops,
                         const std::vector<std::pair<std::size_t, std::string>>& refused,
                         const std::set<std::string>& relisted);
  void refresh_size_metrics();
  // Drops least recently written lists while over the bounds (cache_eviction.cc).
  struct ListUsage {
    std::string key;
    ListRecord record;
    std::uint64_t bytes = 0;
  };
  void enforce_bounds(std::vector<ListUsage> lists);
  // Drops the lists and their sets in one transaction.
  Status drop_lists(const std::vector<const ListUsage*>& doomed);

  Store& store_;
  CacheMetrics& metrics_;
  Options options_;
  std::atomic<std::uint64_t> next_token_{0};

  mutable std::mutex mutex_;  // guards queue_, queue_bytes_, stale_, known_stale_, submitted_,
                              // committed_, stopping_
  std::set<std::string> known_stale_;
  // Two waits, so that what a batch gathers does not wake the writer: `work_`, for anything to
  // do (ops, stale marks, tasks, stopping); `interval_`, during a group commit's interval, for
  // what ends it early (a task, stopping). A list's tap submits every 256 KiB, and each submit
  // woke the writer in its interval only for it to sleep again: 76 futex wakes and context
  // switches per 19 MiB list, a quarter of the writer's time.
  std::condition_variable work_;
  std::condition_variable interval_;
  std::condition_variable committed_cv_;
  std::deque<CacheOp> queue_;
  std::size_t queue_bytes_ = 0;
  std::set<std::string> stale_;
  std::deque<std::pair<Task, std::function<void(Status)>>> tasks_;
  bool tasks_running_ = false;
  std::uint64_t submitted_ = 0;
  std::uint64_t committed_ = 0;
  bool stopping_ = false;

  // Writer-thread state.
  std::unordered_map<std::string, ListRecord> records_;  // loaded list records
  std::unordered_map<std::uint64_t, std::uint32_t>
      staging_;  // list token -> staging set (0: discard)
  std::unordered_map<std::uint64_t, std::uint64_t> token_max_rv_;  // highest item RV per token
  std::unordered_map<std::string, std::uint32_t>
      paginating_;                         // identity -> staging set awaiting pages
  std::set<std::uint64_t> failed_tokens_;  // lists with an item that could not be written
  Relists relists_{metrics_};              // staging sets that hold only what changed
  // identity -> when this process last wrote to it (a sequence number of batches)
  std::unordered_map<std::string, std::uint64_t> last_written_;
  std::uint64_t batch_seq_ = 0;
  std::chrono::steady_clock::time_point last_size_refresh_{};
  UnchangedGets unchanged_gets_;

  std::thread thread_;  // last: started after everything above exists
};

}  // namespace yurthub::cache
