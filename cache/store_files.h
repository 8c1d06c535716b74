// The cache directory around the LMDB environment: creating it with safe permissions, and a
// per-process registry of open cache directories (LMDB forbids opening one environment twice in
// a process: closing either copy drops the POSIX locks the other holds on lock.mdb, and another
// process could then reset the reader table under a live reader). Used by lmdb_store.cc.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>

#include "base/result.h"

namespace yurthub::cache {

std::string strip_trailing_slashes(std::string path);

// Read-write: creates the directory (0700, parents as needed) if missing. An existing directory
// keeps its mode (the operator may have reasons) but looser than 0700 is logged. Read-only:
// requires an existing cache (data.mdb) and creates nothing.
Status prepare_cache_directory(const std::string& dir, bool read_only);

using DirectoryId = std::pair<dev_t, ino_t>;
// Marks `dir` open in this process; an error if it already is. Thread-safe.
Result<DirectoryId> register_open_directory(const std::string& dir);
void unregister_open_directory(DirectoryId id);

}  // namespace yurthub::cache
