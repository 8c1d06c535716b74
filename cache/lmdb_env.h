// Internal to the LMDB store (lmdb_store.cc, lmdb_env.cc, the only files that include <lmdb.h>):
// the open environment shared by the store and its views, RAII for transactions and cursors, and
// opening an environment (directory checks, named databases, format version).
#pragma once

#include <lmdb.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/result.h"
#include "cache/store.h"
#include "cache/store_files.h"

namespace yurthub::cache::lmdb {

inline constexpr unsigned kMaxDbs = 16;        // 7 used
inline constexpr unsigned kMaxReaders = 1024;  // one per live ReadView across all processes
inline constexpr mdb_mode_t kFileMode = 0600;  // the cache holds secrets and service-account tokens
inline constexpr std::string_view kFormatVersionKey = "format_version";
inline constexpr std::string_view kNextSetIdKey = "next_set_id";
inline constexpr std::size_t kRvBytes = 8;

// ---- encodings -------------------------------------------------------------------------------

inline MDB_val to_val(std::string_view s) { return MDB_val{s.size(), const_cast<char*>(s.data())}; }
inline std::string_view from_val(const MDB_val& v) {
  return {static_cast<const char*>(v.mv_data), v.mv_size};
}

// An LMDB failure, with the code callers act on: a full map (the cache is at its bound) and an
// unreadable file (the cache is corrupt) are told apart from the rest.
inline Error lmdb_error(const std::string& what, int rc) {
  ErrorCode code = ErrorCode::Unknown;
  if (rc == MDB_MAP_FULL) code = ErrorCode::ResourceExhausted;
  if (rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND || rc == MDB_INVALID ||
      rc == MDB_VERSION_MISMATCH) {
    code = ErrorCode::DataLoss;
  }
  return make_error(code, what + ": " + mdb_strerror(rc));
}

// ---- environment -----------------------------------------------------------------------------

// One open environment, shared by the Store and every view, so that a view outliving the Store
// (a coroutine finishing after shutdown) never touches a closed environment.
struct Env {
  MDB_env* env = nullptr;
  MDB_dbi lists = 0, objects = 0, discovery = 0, meta = 0, journal = 0, tokens = 0, callers = 0;
  bool has_journal = false;  // false only for a read-only open of a cache older than the journal
  bool has_tokens = false;   // likewise for the kept tokens
  bool has_callers = false;  // and the accepted credentials

  // The database of `db`, or nullopt when a read-only open found none.
  std::optional<MDB_dbi> secrets(Secrets db) const {
    if (db == Secrets::KeptTokens)
      return has_tokens ? std::optional<MDB_dbi>(tokens) : std::nullopt;
    return has_callers ? std::optional<MDB_dbi>(callers) : std::nullopt;
  }
  std::size_t max_key = 0;
  bool read_only = false;
  std::string directory;
  std::optional<std::pair<dev_t, ino_t>> registered;

  Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
  ~Env() {
    if (env != nullptr) mdb_env_close(env);
    if (registered) unregister_open_directory(*registered);
  }
};

struct CursorCloser {
  void operator()(MDB_cursor* cursor) const { mdb_cursor_close(cursor); }
};
using Cursor = std::unique_ptr<MDB_cursor, CursorCloser>;

inline Cursor open_cursor(MDB_txn* txn, MDB_dbi dbi, int* rc) {
  MDB_cursor* cursor = nullptr;
  *rc = mdb_cursor_open(txn, dbi, &cursor);
  return Cursor(*rc == 0 ? cursor : nullptr);
}

// Aborts a transaction unless released (commit paths release before committing).
class TxnGuard {
 public:
  explicit TxnGuard(MDB_txn* txn) : txn_(txn) {}
  TxnGuard(const TxnGuard&) = delete;
  TxnGuard& operator=(const TxnGuard&) = delete;
  ~TxnGuard() {
    if (txn_ != nullptr) mdb_txn_abort(txn_);
  }
  MDB_txn* get() const { return txn_; }
  MDB_txn* release() { return std::exchange(txn_, nullptr); }

 private:
  MDB_txn* txn_;
};

// Opens the environment of options.directory (checked, registered against a second open in this
// process), without its databases.
Result<std::shared_ptr<Env>> open_env(const StoreOptions& options);
// Opens (read-write: creates) the named databases and checks the format, in one transaction.
Status open_databases(Env& env);
Status put_u32(MDB_txn* txn, MDB_dbi dbi, std::string_view name, std::uint32_t number);

}  // namespace yurthub::cache::lmdb
