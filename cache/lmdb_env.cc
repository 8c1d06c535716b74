// Opening the LMDB environment of the cache; see lmdb_env.h. Called by open_lmdb_store (and the
// test hook write_format_version_for_testing) in lmdb_store.cc.
#include "cache/lmdb_env.h"

#include <unistd.h>

#include <tuple>

#include "base/log.h"
#include "cache/lmdb_store.h"
#include "cache/store_codec.h"

namespace yurthub::cache::lmdb {
namespace {

Status register_directory(Env& env) {
  auto id = register_open_directory(env.directory);
  if (!id) return id.error();
  env.registered = *id;
  return {};
}

Status open_environment(Env& env, std::uint64_t map_size) {
  const std::string where = "cache " + env.directory;
  if (int rc = mdb_env_create(&env.env); rc != 0) return lmdb_error(where, rc);
  mdb_env_set_maxdbs(env.env, kMaxDbs);
  mdb_env_set_maxreaders(env.env, kMaxReaders);
  if (!env.read_only) {  // read-only: use the size the writer chose (stored in the meta page)
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    if (int rc = mdb_env_set_mapsize(env.env, (map_size + page - 1) / page * page); rc != 0) {
      return lmdb_error(where + ": map size " + std::to_string(map_size), rc);
    }
  }
  const unsigned flags = MDB_NOTLS | (env.read_only ? MDB_RDONLY : 0u);
  if (int rc = mdb_env_open(env.env, env.directory.c_str(), flags, kFileMode); rc != 0) {
    return lmdb_error(where, rc);
  }
  // A hub killed with -9 leaves its reader slots behind; they would pin old pages forever.
  int dead = 0;
  if (mdb_reader_check(env.env, &dead) == 0 && dead > 0) {
    YH_LOG(Info) << where << ": cleared " << dead << " reader slots of dead processes";
  }
  env.max_key = static_cast<std::size_t>(mdb_env_get_maxkeysize(env.env));
  return {};
}

std::optional<std::uint32_t> read_u32(MDB_txn* txn, MDB_dbi dbi, std::string_view name) {
  MDB_val key = to_val(name), value{};
  if (mdb_get(txn, dbi, &key, &value) != 0 || value.mv_size != 4) return std::nullopt;
  return static_cast<std::uint32_t>(read_be(from_val(value), 4));
}

}  // namespace

Status put_u32(MDB_txn* txn, MDB_dbi dbi, std::string_view name, std::uint32_t number) {
  const std::string bytes = u32_value(number);
  MDB_val key = to_val(name), value = to_val(bytes);
  if (int rc = mdb_put(txn, dbi, &key, &value, 0); rc != 0) return lmdb_error("cache: meta", rc);
  return {};
}

namespace {

bool is_empty(MDB_txn* txn, MDB_dbi dbi) {
  MDB_stat st{};
  return mdb_stat(txn, dbi, &st) == 0 && st.ms_entries == 0;
}

// Checks (and on a fresh read-write cache, writes) meta/format_version and next_set_id.
Status check_format(MDB_txn* txn, const Env& env) {
  const std::string where = "cache " + env.directory;
  const auto version = read_u32(txn, env.meta, kFormatVersionKey);
  if (!version) {
    if (env.read_only) return make_error(where + " is not initialised (no format version)");
    if (!is_empty(txn, env.lists) || !is_empty(txn, env.objects)) {
      return make_error(ErrorCode::DataLoss,
                        where + " holds data but no format version: not written by yurthub?");
    }
    if (Status s = put_u32(txn, env.meta, kFormatVersionKey, kStoreFormatVersion); !s) return s;
    return put_u32(txn, env.meta, kNextSetIdKey, 1);
  }
  if (*version > kStoreFormatVersion) {
    return make_error(where + " has format version " + std::to_string(*version) +
                      ", newer than this yurthub reads (" + std::to_string(kStoreFormatVersion) +
                      "): run the newer yurthub, or move the directory away to start empty");
  }
  if (*version < 1) return make_error(ErrorCode::DataLoss, where + " has invalid format version 0");
  return {};
}

}  // namespace

Status open_databases(Env& env) {
  MDB_txn* raw = nullptr;
  if (int rc = mdb_txn_begin(env.env, nullptr, env.read_only ? MDB_RDONLY : 0, &raw); rc != 0) {
    return lmdb_error("cache " + env.directory, rc);
  }
  TxnGuard txn(raw);
  const std::pair<const char*, MDB_dbi*> databases[] = {{"meta", &env.meta},
                                                        {"lists", &env.lists},
                                                        {"objects", &env.objects},
                                                        {"discovery", &env.discovery}};
  for (const auto& [name, dbi] : databases) {
    if (int rc = mdb_dbi_open(txn.get(), name, env.read_only ? 0 : MDB_CREATE, dbi); rc != 0) {
      return lmdb_error("cache " + env.directory + ": database '" + name + "'", rc);
    }
  }
  // Added after format 1 shipped: created on the first read-write open; a read-only open of an
  // older cache reads it as empty.
  const std::tuple<const char*, MDB_dbi*, bool*> later[] = {
      {"journal", &env.journal, &env.has_journal},
      {"tokens", &env.tokens, &env.has_tokens},
      {"callers", &env.callers, &env.has_callers}};
  for (const auto& [name, dbi, present] : later) {
    const int rc = mdb_dbi_open(txn.get(), name, env.read_only ? 0 : MDB_CREATE, dbi);
    if (rc != 0 && !(env.read_only && rc == MDB_NOTFOUND)) {
      return lmdb_error("cache " + env.directory + ": database '" + name + "'", rc);
    }
    *present = rc == 0;
  }
  if (Status s = check_format(txn.get(), env); !s) return s;
  // Committing (even a read-only transaction) is what makes the handles usable by later ones.
  if (int rc = mdb_txn_commit(txn.release()); rc != 0) {
    return lmdb_error("cache " + env.directory + ": initialising", rc);
  }
  return {};
}

Result<std::shared_ptr<Env>> open_env(const StoreOptions& options) {
  if (options.directory.empty()) return make_error("cache: no directory given");
  if (!options.read_only && options.map_size == 0) return make_error("cache: map size is 0");
  auto env = std::make_shared<Env>();
  env->directory = strip_trailing_slashes(options.directory);
  env->read_only = options.read_only;
  if (Status s = prepare_cache_directory(env->directory, env->read_only); !s) return s.error();
  if (Status s = register_directory(*env); !s) return s.error();
  if (Status s = open_environment(*env, options.map_size); !s) return s.error();
  return env;
}

}  // namespace yurthub::cache::lmdb
