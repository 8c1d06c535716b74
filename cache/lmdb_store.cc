// cache::Store on LMDB: transactions, views and the store (lmdb_env.cc opens the environment;
// the two are the only files that include <lmdb.h>). Format and key encodings are described in
// lmdb_store.h. Opened once per process by the hub (read-write) or by
// `yurthub cache ...` (read-only, possibly while the hub runs: LMDB is multi-process safe).
//
// Threading: the environment is opened with MDB_NOTLS, so a read transaction (ReadView) is not tied
// to a thread's reader slot: several views may be open on one thread (coroutines) and a view may be
// used from whichever thread runs its coroutine, one at a time. write() runs on one thread (the
// CacheWriter); LMDB's own writer lock serializes it against other processes.
//
// Durability: default LMDB sync mode (no MDB_NOSYNC, MDB_NOMETASYNC or MDB_WRITEMAP): a commit has
// reached the disk when write() returns. Every invariant the hub relies on lives inside one write
// transaction, so a crash at any point leaves the last committed state.
#include "cache/lmdb_store.h"

#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <deque>
#include <utility>

#include "base/clock.h"
#include "base/log.h"
#include "cache/list_identity.h"
#include "cache/lmdb_env.h"
#include "cache/store.h"
#include "cache/store_codec.h"
#include "cache/store_files.h"

namespace yurthub::cache {
namespace {

using namespace lmdb;  // NOLINT: this file is the store's implementation

// ---- reading ---------------------------------------------------------------------------------

// The ReadView methods, shared by read views and write transactions (Base is ReadView or WriteTxn).
template <class Base>
class LmdbReader : public Base {
 public:
  std::optional<ListRecord> list(std::string_view identity_key) override {
    auto value = get(env_->lists, identity_key);
    if (!value) return std::nullopt;
    auto record = decode_list_record(*value);
    if (!record)
      YH_LOG(Error) << "cache: undecodable list record " << printable_identity(identity_key);
    return record;
  }

  std::vector<std::pair<std::string, ListRecord>> lists_with_prefix(
      std::string_view prefix) override {
    std::vector<std::pair<std::string, ListRecord>> out;
    int rc = 0;
    Cursor cursor = open_cursor(txn_, env_->lists, &rc);
    MDB_val key = to_val(prefix), value{};
    if (cursor) {
      rc = mdb_cursor_get(cursor.get(), &key, &value, prefix.empty() ? MDB_FIRST : MDB_SET_RANGE);
    }
    for (; rc == 0 && from_val(key).starts_with(prefix);
         rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_NEXT)) {
      if (auto record = decode_list_record(from_val(value))) {
        out.emplace_back(std::string(from_val(key)), std::move(*record));
      } else {
        YH_LOG(Error) << "cache: undecodable list record " << printable_identity(from_val(key));
      }
    }
    log_cursor_end("listing list records", rc);
    return out;
  }

  std::optional<StoredObject> object(std::uint32_t set, std::string_view namespace_name,
                                     std::string_view name) override {
    return find_object(set, namespace_name, name, /*stable=*/true);
  }

  void scan(std::uint32_t set, std::string_view namespace_name, std::string_view after_namespace,
            std::string_view after_name,
            const std::function<bool(std::string_view, std::string_view, const StoredObject&)>&
                visit) override {
    if (namespace_name.find('\0') != std::string_view::npos) return;
    std::string prefix = set_prefix(set);
    if (!namespace_name.empty()) (prefix += namespace_name) += '\0';
    std::string start = prefix;
    if (!after_name.empty()) {
      // key + "\0" is the smallest key after key: resume strictly after (after_ns, after_name).
      std::string after = object_key(set, after_namespace, after_name) + '\0';
      if (after > start) start = std::move(after);
    }
    int rc = 0;
    Cursor cursor = open_cursor(txn_, env_->objects, &rc);
    MDB_val key = to_val(start), value{};
    if (cursor) rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_SET_RANGE);
    while (rc == 0 && from_val(key).starts_with(prefix)) {
      // In a write transaction the visitor may write; keep() copies the key so it stays valid.
      const std::string_view stable_key = keep(from_val(key));
      const auto parts = split_object_key(stable_key);
      auto object = decode_object(from_val(value));
      const std::uint64_t mutations_before = mutations_;
      if (object && parts && !visit(parts->first, parts->second, *object)) return;
      if (mutations_ == mutations_before) {
        rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_NEXT);
      } else {  // the visitor wrote: re-seek rather than trust the cursor's position
        const std::string resume = std::string(stable_key) + '\0';
        key = to_val(resume);
        rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_SET_RANGE);
      }
    }
    log_cursor_end("scanning cached objects", rc);
  }

  std::optional<std::string> discovery(std::string_view path) override {
    auto value = get(env_->discovery, path);
    if (!value) return std::nullopt;
    return std::string(*value);
  }

  void scan_journal(const std::function<bool(std::uint64_t, std::string_view)>& visit) override {
    if (!env_->has_journal) return;
    int rc = 0;
    Cursor cursor = open_cursor(txn_, env_->journal, &rc);
    MDB_val key{}, value{};
    if (cursor) rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_FIRST);
    for (; rc == 0; rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_NEXT)) {
      if (key.mv_size != 8) continue;
      if (!visit(read_be(from_val(key), 8), keep(from_val(value)))) return;
    }
    log_cursor_end("scanning the journal", rc);
  }

  std::optional<std::string> secret(Secrets db, std::string_view key) override {
    const auto dbi = env_->secrets(db);
    if (!dbi) return std::nullopt;
    auto value = get(*dbi, key);
    if (!value) return std::nullopt;
    return std::string(*value);
  }

  void scan_secrets(Secrets db,
                    const std::function<bool(std::string_view, std::string_view)>& visit) override {
    const auto dbi = env_->secrets(db);
    if (!dbi) return;
    int rc = 0;
    Cursor cursor = open_cursor(txn_, *dbi, &rc);
    MDB_val key{}, value{};
    if (cursor) rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_FIRST);
    for (; rc == 0; rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_NEXT)) {
      if (!visit(keep(from_val(key)), keep(from_val(value)))) return;
    }
    log_cursor_end("scanning secrets", rc);
  }

 protected:
  // copy_values: values returned by a read-only transaction point into the map and stay valid
  // until the transaction ends. Values returned by a write transaction are only valid until its
  // next write (LMDB may reuse dirty pages), so a WriteTxn copies them into arena_ to keep
  // store.h's promise (valid while the transaction lives).
  LmdbReader(std::shared_ptr<Env> env, MDB_txn* txn, bool copy_values)
      : env_(std::move(env)), txn_(txn), copy_values_(copy_values) {}

  std::optional<std::string_view> get(MDB_dbi dbi, std::string_view key) {
    if (key.empty() || key.size() > env_->max_key) return std::nullopt;  // cannot be stored
    MDB_val k = to_val(key), value{};
    const int rc = mdb_get(txn_, dbi, &k, &value);
    if (rc == MDB_NOTFOUND) return std::nullopt;
    if (rc != 0) {
      YH_LOG(Error) << "cache: read failed: " << mdb_strerror(rc);
      return std::nullopt;
    }
    return from_val(value);
  }

  std::string_view keep(std::string_view bytes) {
    if (!copy_values_) return bytes;
    return arena_.emplace_back(bytes);
  }

  // stable: the JSON stays valid for the whole transaction (keep()); otherwise only until the
  // transaction's next write.
  std::optional<StoredObject> decode_object(std::string_view value, bool stable = true) {
    if (value.size() < kRvBytes) {
      YH_LOG(Error) << "cache: object value of " << value.size() << " bytes has no resourceVersion";
      return std::nullopt;
    }
    const std::string_view json = value.substr(kRvBytes);
    return StoredObject{read_be(value, kRvBytes), stable ? keep(json) : json};
  }

  std::optional<StoredObject> find_object(std::uint32_t set, std::string_view namespace_name,
                                          std::string_view name, bool stable) {
    if (namespace_name.find('\0') != std::string_view::npos) return std::nullopt;
    auto value = get(env_->objects, object_key(set, namespace_name, name));
    if (!value) return std::nullopt;
    return decode_object(*value, stable);
  }

  static void log_cursor_end(const char* what, int rc) {
    if (rc != 0 && rc != MDB_NOTFOUND)
      YH_LOG(Error) << "cache: " << what << ": " << mdb_strerror(rc);
  }

  std::shared_ptr<Env> env_;
  MDB_txn* txn_;
  std::uint64_t mutations_ = 0;  // bumped by every write, so scan() knows to re-seek

 private:
  bool copy_values_;
  std::deque<std::string> arena_;  // deque: element addresses (and short strings) never move
};

class LmdbReadView final : public LmdbReader<ReadView> {
 public:
  LmdbReadView(std::shared_ptr<Env> env, MDB_txn* txn)
      : LmdbReader(std::move(env), txn, /*copy_values=*/false) {}
  LmdbReadView(const LmdbReadView&) = delete;
  LmdbReadView& operator=(const LmdbReadView&) = delete;
  // Ends the snapshot: every StoredObject::json it returned now dangles.
  ~LmdbReadView() override { mdb_txn_abort(txn_); }
};

// Answers nothing: what read() returns when LMDB cannot start a read transaction (reader table
// full, map resized by another process). Nothing cached reads as "never listed", a 404 offline:
// the safe answer (an empty pod list would make kubelet kill its pods).
class EmptyView final : public ReadView {
 public:
  std::optional<ListRecord> list(std::string_view) override { return std::nullopt; }
  std::vector<std::pair<std::string, ListRecord>> lists_with_prefix(std::string_view) override {
    return {};
  }
  std::optional<StoredObject> object(std::uint32_t, std::string_view, std::string_view) override {
    return std::nullopt;
  }
  void scan(std::uint32_t, std::string_view, std::string_view, std::string_view,
            const std::function<bool(std::string_view, std::string_view, const StoredObject&)>&)
      override {}
  std::optional<std::string> discovery(std::string_view) override { return std::nullopt; }
  void scan_journal(const std::function<bool(std::uint64_t, std::string_view)>&) override {}
  std::optional<std::string> secret(Secrets, std::string_view) override { return std::nullopt; }
  void scan_secrets(Secrets,
                    const std::function<bool(std::string_view, std::string_view)>&) override {}
};

// ---- writing ---------------------------------------------------------------------------------

class LmdbWriteTxn final : public LmdbReader<WriteTxn> {
 public:
  LmdbWriteTxn(std::shared_ptr<Env> env, MDB_txn* txn)
      : LmdbReader(std::move(env), txn, /*copy_values=*/true) {}

  Result<std::uint32_t> allocate_set() override {
    std::uint32_t next = 1;  // 0 means "no set" in ListRecord
    if (auto stored = get(env_->meta, kNextSetIdKey)) {
      if (stored->size() != 4) return make_error("cache: meta next_set_id is corrupt");
      next = static_cast<std::uint32_t>(read_be(*stored, 4));
    }
    if (next == 0) return make_error("cache: all 2^32 object set ids have been used");
    if (Status s = put(env_->meta, kNextSetIdKey, u32_value(next + 1), "allocating a set id"); !s) {
      return s.error();
    }
    return next;
  }

  Status put_list(std::string_view identity_key, const ListRecord& record) override {
    if (Status s = check_key(identity_key, "list " + printable_identity(identity_key)); !s)
      return s;
    return put(env_->lists, identity_key, encode_list_record(record),
               "storing list " + printable_identity(identity_key));
  }

  Status delete_list(std::string_view identity_key) override {
    return del(env_->lists, identity_key, "deleting list " + printable_identity(identity_key));
  }

  Status put_object(std::uint32_t set, std::string_view namespace_name, std::string_view name,
                    std::uint64_t resource_version, std::string_view json) override {
    const std::string what = object_name(set, namespace_name, name);
    if (namespace_name.find('\0') != std::string_view::npos) {
      return make_error("cache: cannot store " + what + ": NUL byte in namespace");
    }
    const std::string key = object_key(set, namespace_name, name);
    if (Status s = check_key(key, what); !s) return s;
    if (Status s = usable(); !s) return s;
    // MDB_RESERVE: LMDB allocates the value and we fill it, saving a copy of the JSON.
    MDB_val k = to_val(key), value{kRvBytes + json.size(), nullptr};
    if (int rc = mdb_put(txn_, env_->objects, &k, &value, MDB_RESERVE); rc != 0) {
      return fail("storing " + what, rc);
    }
    std::string rv;
    append_be(rv, resource_version, kRvBytes);
    std::memcpy(value.mv_data, rv.data(), kRvBytes);
    if (!json.empty())
      std::memcpy(static_cast<char*>(value.mv_data) + kRvBytes, json.data(), json.size());
    ++mutations_;
    return {};
  }

  std::optional<StoredObject> peek_object(std::uint32_t set, std::string_view namespace_name,
                                          std::string_view name) override {
    return find_object(set, namespace_name, name, /*stable=*/false);
  }

  void scan_names(std::uint32_t set,
                  const std::function<bool(std::string_view, std::string_view)>& visit) override {
    const std::string prefix = set_prefix(set);
    int rc = 0;
    Cursor cursor = open_cursor(txn_, env_->objects, &rc);
    MDB_val key = to_val(prefix), value{};
    if (cursor) rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_SET_RANGE);
    for (; rc == 0 && from_val(key).starts_with(prefix);
         rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_NEXT)) {
      const auto parts = split_object_key(from_val(key));
      if (parts && !visit(parts->first, parts->second)) return;
    }
    log_cursor_end("scanning cached names", rc);
  }

  Status delete_object(std::uint32_t set, std::string_view namespace_name,
                       std::string_view name) override {
    if (namespace_name.find('\0') != std::string_view::npos) return {};  // cannot exist
    return del(env_->objects, object_key(set, namespace_name, name),
               "deleting " + object_name(set, namespace_name, name));
  }

  Status drop_set(std::uint32_t set) override {
    if (Status s = usable(); !s) return s;
    const std::string prefix = set_prefix(set);
    const std::string what = "dropping object set " + std::to_string(set);
    int rc = 0;
    Cursor cursor = open_cursor(txn_, env_->objects, &rc);
    if (!cursor) return fail(what, rc);
    ++mutations_;
    for (;;) {  // re-seek after each delete: simpler to trust than cursor state after a delete
      MDB_val key = to_val(prefix), value{};
      rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_SET_RANGE);
      if (rc == MDB_NOTFOUND || (rc == 0 && !from_val(key).starts_with(prefix))) return {};
      if (rc == 0) rc = mdb_cursor_del(cursor.get(), 0);
      if (rc != 0) return fail(what, rc);
    }
  }

  Status put_discovery(std::string_view path, std::string_view json) override {
    const std::string what = "discovery document " + std::string(path);
    if (Status s = check_key(path, what); !s) return s;
    return put(env_->discovery, path, json, "storing " + what);
  }

  Status put_journal(std::uint64_t seq, std::string_view entry) override {
    // Never over an entry: a journaled write was acknowledged to its client, so a sequence number
    // used twice must fail the transaction, not lose the first write.
    return put(env_->journal, journal_key(seq), entry,
               "storing journal entry " + std::to_string(seq), MDB_NOOVERWRITE);
  }

  Status delete_journal(std::uint64_t seq) override {
    return del(env_->journal, journal_key(seq), "deleting journal entry " + std::to_string(seq));
  }

  Status put_secret(Secrets db, std::string_view key, std::string_view value) override {
    if (Status s = check_key(key, "secret"); !s) return s;
    return put(*env_->secrets(db), key, value, "storing a secret");
  }

  Status delete_secret(Secrets db, std::string_view key) override {
    return del(*env_->secrets(db), key, "deleting a secret");
  }

  // The first LMDB error of this transaction. LMDB has then invalidated the transaction, so
  // write() aborts it even if the caller's function ignored the error and returned ok.
  const std::optional<Error>& failure() const { return failure_; }

 private:
  static std::string journal_key(std::uint64_t seq) {
    std::string key;
    append_be(key, seq, 8);
    return key;
  }

  static std::string object_name(std::uint32_t set, std::string_view ns, std::string_view name) {
    return "object " + (ns.empty() ? "" : std::string(ns) + "/") + std::string(name) + " (set " +
           std::to_string(set) + ")";
  }

  // Refuses keys LMDB cannot store, before touching LMDB, so the transaction stays usable and the
  // caller can count the object and go on. Never truncated: a truncated key could collide.
  Status check_key(std::string_view key, const std::string& what) const {
    if (key.empty()) return make_error("cache: cannot store " + what + ": empty key");
    if (key.size() > env_->max_key) {
      return make_error("cache: cannot store " + what + ": key of " + std::to_string(key.size()) +
                        " bytes exceeds LMDB's maximum key size (" + std::to_string(env_->max_key) +
                        ")");
    }
    return {};
  }

  Status usable() const {
    if (failure_) return *failure_;
    return {};
  }

  Status fail(const std::string& what, int rc) {
    failure_ = lmdb_error("cache: " + what, rc);
    return *failure_;
  }

  Status put(MDB_dbi dbi, std::string_view key, std::string_view value, const std::string& what,
             unsigned flags = 0) {
    if (Status s = usable(); !s) return s;
    MDB_val k = to_val(key), v = to_val(value);
    if (int rc = mdb_put(txn_, dbi, &k, &v, flags); rc != 0) return fail(what, rc);
    ++mutations_;
    return {};
  }

  Status del(MDB_dbi dbi, std::string_view key, const std::string& what) {
    if (Status s = usable(); !s) return s;
    if (key.empty() || key.size() > env_->max_key) return {};  // cannot exist
    MDB_val k = to_val(key);
    const int rc = mdb_del(txn_, dbi, &k, nullptr);
    if (rc == MDB_NOTFOUND) return {};
    if (rc != 0) return fail(what, rc);
    ++mutations_;
    return {};
  }

  std::optional<Error> failure_;
};

// ---- the store -------------------------------------------------------------------------------

class LmdbStore final : public Store {
 public:
  explicit LmdbStore(std::shared_ptr<Env> env) : env_(std::move(env)) {}

  std::unique_ptr<ReadView> read() override {
    MDB_txn* txn = nullptr;
    if (int rc = mdb_txn_begin(env_->env, nullptr, MDB_RDONLY, &txn); rc != 0) {
      YH_LOG(Error) << "cache: cannot start a read transaction in " << env_->directory << ": "
                    << mdb_strerror(rc) << "; answering as if nothing were cached";
      return std::make_unique<EmptyView>();
    }
    return std::make_unique<LmdbReadView>(env_, txn);
  }

  Status write(const std::function<Status(WriteTxn&)>& fn) override {
    if (env_->read_only) return make_error("cache: " + env_->directory + " is open read-only");
    // LMDB's writer lock is not recursive: a nested write() on this thread would deadlock.
    if (writing_.exchange(true)) return make_error("cache: write() called during another write()");
    struct Reset {
      std::atomic<bool>& flag;
      ~Reset() { flag = false; }
    } reset{writing_};
    MDB_txn* raw = nullptr;
    if (int rc = mdb_txn_begin(env_->env, nullptr, 0, &raw); rc != 0) {
      return lmdb_error("cache: cannot start a write transaction", rc);
    }
    TxnGuard txn(raw);  // aborts on every early return
    LmdbWriteTxn writer(env_, raw);
    if (Status s = fn(writer); !s) return s;
    if (writer.failure()) return *writer.failure();
    // mdb_txn_commit frees the transaction whether or not it succeeds (e.g. MDB_MAP_FULL while
    // writing the free list); nothing was committed on failure.
    if (int rc = mdb_txn_commit(txn.release()); rc != 0) {
      return lmdb_error("cache: commit failed in " + env_->directory, rc);
    }
    return {};
  }

  StoreStats stats() override {
    StoreStats out;
    MDB_envinfo info{};
    MDB_stat env_stat{};
    if (mdb_env_info(env_->env, &info) != 0 || mdb_env_stat(env_->env, &env_stat) != 0) return out;
    out.map_size = info.me_mapsize;
    MDB_txn* raw = nullptr;
    if (mdb_txn_begin(env_->env, nullptr, MDB_RDONLY, &raw) != 0) return out;
    TxnGuard txn(raw);
    std::uint64_t pages = 2;  // the two meta pages
    for (MDB_dbi dbi :
         {MDB_dbi{0}, MDB_dbi{1}, env_->lists, env_->objects, env_->discovery, env_->meta,
          env_->journal, env_->tokens, env_->callers}) {  // 0: free list, 1: main
      if (dbi == env_->journal && !env_->has_journal) continue;
      if (dbi == env_->tokens && !env_->has_tokens) continue;
      if (dbi == env_->callers && !env_->has_callers) continue;
      MDB_stat st{};
      if (mdb_stat(txn.get(), dbi, &st) != 0) continue;
      pages += st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages;
      if (dbi == env_->objects) out.objects = st.ms_entries;
      if (dbi == env_->lists) out.lists = st.ms_entries;
      if (dbi == env_->journal) out.journal_entries = st.ms_entries;
    }
    out.used_bytes = pages * env_stat.ms_psize;
    return out;
  }

 private:
  std::shared_ptr<Env> env_;
  std::atomic<bool> writing_{false};
};

}  // namespace

Result<std::unique_ptr<Store>> open_lmdb_store(const StoreOptions& options) {
  auto env = open_env(options);
  if (!env) return env.error();
  if (Status s = open_databases(**env); !s) return s.error();
  return std::unique_ptr<Store>(std::make_unique<LmdbStore>(std::move(*env)));
}

Result<OpenedStore> open_lmdb_store_or_reset(const StoreOptions& options) {
  if (Status s = prepare_cache_directory(strip_trailing_slashes(options.directory), false); !s) {
    return s.error();
  }
  auto first = open_lmdb_store(options);
  if (first) return OpenedStore{std::move(*first), "", ""};
  const std::string dir = strip_trailing_slashes(options.directory);
  struct stat st {};
  // Only files LMDB finds corrupt or of another format are moved aside. Any other failure (no
  // memory, a permission, a store of a newer yurthub, the store open already) is not the files':
  // they stay as they are, with the journal's unreplayed writes, and the hub serves online only.
  if (::stat((dir + "/data.mdb").c_str(), &st) != 0 || first.error().code != ErrorCode::DataLoss) {
    return first.error();
  }
  const std::string aside = dir + "/unusable-" + std::to_string(base::WallClock::unix_seconds());
  if (::mkdir(aside.c_str(), 0700) != 0 && errno != EEXIST) {
    return make_error(first.error().message +
                      "; and cannot move it aside: " + std::strerror(errno));
  }
  for (const char* file : {"data.mdb", "lock.mdb"}) {
    const std::string from = dir + "/" + file;
    if (::rename(from.c_str(), (aside + "/" + file).c_str()) != 0 && errno != ENOENT) {
      return make_error(first.error().message + "; and cannot move " + from +
                        " aside: " + std::strerror(errno));
    }
  }
  auto fresh = open_lmdb_store(options);
  if (!fresh) return fresh.error();
  return OpenedStore{std::move(*fresh), first.error().message, aside};
}

Status write_format_version_for_testing(const std::string& directory, std::uint32_t version) {
  auto env = open_env(StoreOptions{directory});
  if (!env) return env.error();
  MDB_txn* raw = nullptr;
  if (int rc = mdb_txn_begin((*env)->env, nullptr, 0, &raw); rc != 0) return lmdb_error("txn", rc);
  TxnGuard txn(raw);
  if (int rc = mdb_dbi_open(txn.get(), "meta", MDB_CREATE, &(*env)->meta); rc != 0) {
    return lmdb_error("meta", rc);
  }
  if (Status s = put_u32(txn.get(), (*env)->meta, kFormatVersionKey, version); !s) return s;
  if (int rc = mdb_txn_commit(txn.release()); rc != 0) return lmdb_error("commit", rc);
  return {};
}

}  // namespace yurthub::cache
