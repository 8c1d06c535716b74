// The LMDB implementation of cache::Store (open_lmdb_store is declared in store.h): its on-disk
// format, and a hook tests use to simulate a cache written by a newer yurthub. lmdb_store.cc is
// the only file in the project that includes <lmdb.h>.
//
// On-disk format (format_version 1), one LMDB environment in StoreOptions::directory (data.mdb,
// lock.mdb, both 0600), five named databases, all integers big-endian so keys sort numerically:
//
//   meta       "format_version" -> u32; "next_set_id" -> u32 (ids start at 1, never reused)
//   lists      ListIdentity::key() -> ListRecord, encoded as
//                u8 record version (1) | u8 flags (bit 0 complete, bit 1 stale) |
//                u32 set_id | u32 staging_id | u64 resource_version | i64 synced_unix |
//                u32 length + list_kind | u32 length + api_version
//   objects    u32 set id | namespace | '\0' | name -> u64 resourceVersion | JSON bytes
//              (cluster-scoped objects have an empty namespace, so they sort first in a set)
//   discovery  request path ("/api/v1") -> JSON bytes
//   journal    u64 sequence number -> JournalEntry as JSON (journal_entry.h); added without a
//              format change: an older binary ignores it, a newer one creates it on open
//
// A binary whose kStoreFormatVersion is lower than the stored format_version refuses to open the
// cache (it cannot know what a newer writer meant); a higher one would migrate on open.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace yurthub::cache {

inline constexpr std::uint32_t kStoreFormatVersion = 1;

// Overwrites meta/format_version of the (closed) store in `directory`. Tests only: it exists so
// that tests can check that a newer format is refused without including <lmdb.h> themselves.
Status write_format_version_for_testing(const std::string& directory, std::uint32_t version);

}  // namespace yurthub::cache
