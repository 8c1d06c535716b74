// Store: the node's persistent object cache, behind a narrow interface (LevelDB-style), so that
// LMDB stays inside lmdb_store.cc. What is stored:
//
//   - Object sets. Every cached object belongs to a set (a uint32 id), one set per ListIdentity
//     (one component's list/watch of one resource, namespace scope and selector), the way each
//     client-go informer has its own store. Objects are keyed (set, namespace, name) and carry
//     their resourceVersion and JSON exactly as the component was served it.
//   - List records: identity key -> ListRecord (which set is current, the list's resourceVersion,
//     whether it is complete or stale, a staging set while a paginated list is being assembled).
//   - Discovery documents (/version, /api, /apis, /api/v1, /apis/<g>/<v>): path -> JSON.
//   - The offline write journal: sequence number -> encoded JournalEntry (cache/journal_entry.h).
//   - Secrets, in databases of their own that nothing listing the cache's contents visits: kept
//     service-account tokens (cache/token_keeper.h: key -> the apiserver's TokenRequest answer)
//     and the credentials the apiserver accepted (cache/callers.h: keyed hash -> whose they are).
//
// Concurrency: any number of ReadViews (consistent snapshots) on any threads, at the same time as
// one writer. Only the CacheWriter thread calls write(). Read views may be held across coroutine
// suspensions on one thread but are not shared between threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace yurthub::cache {

// The databases of secrets.
enum class Secrets : std::uint8_t { KeptTokens, Callers };

struct ListRecord {
  std::uint32_t set_id = 0;            // the current object set (0 = none yet)
  std::uint32_t staging_id = 0;        // set being assembled from a paginated list (0 = none)
  std::uint64_t resource_version = 0;  // highest seen: list RV, events, bookmarks
  bool complete = false;  // a full list was stored (a set fed only by watch events or gets is not)
  bool stale = false;     // a write for this identity failed; see docs/offline-semantics.md
  std::int64_t synced_unix = 0;  // when the last full list was stored (seconds since epoch)
  std::string list_kind;         // e.g. "PodList"; answers offline lists with the right kind
  std::string api_version;       // e.g. "v1", "discovery.k8s.io/v1"
  bool operator==(const ListRecord&) const = default;
};

struct StoredObject {
  std::uint64_t resource_version = 0;
  std::string_view json;  // valid while the view (or transaction) that returned it lives
};

// A consistent, read-only snapshot.
class ReadView {
 public:
  virtual ~ReadView() = default;

  virtual std::optional<ListRecord> list(std::string_view identity_key) = 0;
  // Every list record whose identity key starts with `prefix`, in key order.
  virtual std::vector<std::pair<std::string, ListRecord>> lists_with_prefix(
      std::string_view prefix) = 0;
  virtual std::optional<StoredObject> object(std::uint32_t set, std::string_view namespace_name,
                                             std::string_view name) = 0;
  // Visits the objects of `set` in (namespace, name) order. With a non-empty `namespace_name`,
  // only that namespace. Starts strictly after (after_namespace, after_name) when after_name is
  // non-empty. `visit` returns false to stop.
  virtual void scan(std::uint32_t set, std::string_view namespace_name,
                    std::string_view after_namespace, std::string_view after_name,
                    const std::function<bool(std::string_view namespace_name, std::string_view name,
                                             const StoredObject&)>& visit) = 0;
  virtual std::optional<std::string> discovery(std::string_view path) = 0;
  // The offline write journal (cache/journal.h): its entries in sequence order. `visit` returns
  // false to stop.
  virtual void scan_journal(
      const std::function<bool(std::uint64_t seq, std::string_view entry)>& visit) = 0;
  // Secrets (kept tokens, accepted credentials).
  virtual std::optional<std::string> secret(Secrets db, std::string_view key) = 0;
  virtual void scan_secrets(
      Secrets db,
      const std::function<bool(std::string_view key, std::string_view value)>& visit) = 0;
};

// One write transaction: everything done through it commits or aborts together.
class WriteTxn : public ReadView {
 public:
  // A set id never used before (ids are persisted, never reused).
  virtual Result<std::uint32_t> allocate_set() = 0;
  virtual Status put_list(std::string_view identity_key, const ListRecord& record) = 0;
  virtual Status delete_list(std::string_view identity_key) = 0;
  // Stores the object unconditionally (the caller enforces resourceVersion order).
  virtual Status put_object(std::uint32_t set, std::string_view namespace_name,
                            std::string_view name, std::uint64_t resource_version,
                            std::string_view json) = 0;
  virtual Status delete_object(std::uint32_t set, std::string_view namespace_name,
                               std::string_view name) = 0;
  // Deletes every object of the set.
  virtual Status drop_set(std::uint32_t set) = 0;
  // Like object(), without the copy that keeps a value valid for the whole transaction: the JSON
  // is valid only until this transaction's next write. For comparing what is stored with what
  // is about to be written (the writer does it for every list item and watch event).
  virtual std::optional<StoredObject> peek_object(std::uint32_t set,
                                                  std::string_view namespace_name,
                                                  std::string_view name) = 0;
  // Visits the (namespace, name) of each object of `set` in order, without reading or copying
  // values; the names are valid during the call only, and `visit` must not write through this
  // transaction. `visit` returns false to stop.
  virtual void scan_names(
      std::uint32_t set,
      const std::function<bool(std::string_view namespace_name, std::string_view name)>& visit) = 0;
  virtual Status put_discovery(std::string_view path, std::string_view json) = 0;
  virtual Status put_journal(std::uint64_t seq, std::string_view entry) = 0;
  virtual Status delete_journal(std::uint64_t seq) = 0;
  virtual Status put_secret(Secrets db, std::string_view key, std::string_view value) = 0;
  virtual Status delete_secret(Secrets db, std::string_view key) = 0;
};

struct StoreStats {
  std::uint64_t map_size = 0;    // configured maximum, bytes
  std::uint64_t used_bytes = 0;  // pages in use x page size
  std::uint64_t objects = 0;
  std::uint64_t lists = 0;
  std::uint64_t journal_entries = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  virtual std::unique_ptr<ReadView> read() = 0;
  // Runs `fn` in one write transaction and commits (durably) if it returns ok; aborts otherwise
  // and returns its error. A failed commit (e.g. the map is full) is returned, never hidden.
  virtual Status write(const std::function<Status(WriteTxn&)>& fn) = 0;
  virtual StoreStats stats() = 0;
};

struct StoreOptions {
  std::string directory;                // created 0700 if missing; files are 0600
  std::uint64_t map_size = 1ull << 30;  // maximum size of the data file
  bool read_only = false;               // for `yurthub cache` while the hub runs
};

// Opens (creating if needed) the cache under options.directory. Errors name the directory and
// the LMDB reason (permissions, a file that is not an LMDB environment, ...).
Result<std::unique_ptr<Store>> open_lmdb_store(const StoreOptions& options);

// What the hub opens its cache with: the cache must never stop the hub (a restart loop would
// leave its port free for any local user to bind). When LMDB finds the store's files corrupt or
// of another format (ErrorCode::DataLoss), they are moved aside into
// <directory>/unusable-<unix seconds>/ for an operator to look at, and an empty store is opened;
// `reset_reason` says why (the caller logs and counts it). Any other failure (no memory, a
// permission, a store written by a newer yurthub, the store open already) is an error and the
// files stay, journal included: the caller serves online only.
struct OpenedStore {
  std::unique_ptr<Store> store;
  std::string reset_reason;  // "" when the store opened as it was
  std::string moved_to;      // where the unusable files went
};
Result<OpenedStore> open_lmdb_store_or_reset(const StoreOptions& options);

}  // namespace yurthub::cache
