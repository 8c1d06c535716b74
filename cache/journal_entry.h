// JournalEntry: one write a client made while the node was offline, as the journal keeps it in
// the store (lmdb_store.h, database "journal") until the cloud has taken it or refused it for good.
// Encoded as a JSON object so that `yurthub journal ls` and an operator with mdb_dump can read it.
// Pure; used by cache/journal.cc (writing, loading), cache/journal_replay.cc and cache/inspect.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace yurthub::cache {

struct JournalEntry {
  std::uint64_t seq = 0;          // the store key; replay order
  std::int64_t created_unix = 0;  // when the client's write was accepted
  std::string method;             // "PATCH", "PUT" or "POST"
  std::string target;             // request-target as the client sent it (path and query)
  std::string content_type;       // as the client sent it
  std::string user_agent;         // as the client sent it; replayed with it
  std::string component;          // the cache component (User-Agent before '/')
  // The Authorization header the client sent, replayed with the entry ("" when the hub's own
  // credentials were used, as for kubelet on the plain port).
  std::string authorization;
  std::string
      object;  // "group/version/resource/namespace/name": entries of one object replay in order
  std::uint64_t base_resource_version = 0;  // of the cached object the write was applied to
  std::string base;  // PUT only: that cached object, for the three-way merge of a stale update
  std::string body;  // the request body as sent
  // Written by root or the hub's user on the node (RequestInfo::privileged_peer): counts against
  // the whole journal; other callers' entries only against their share (JournalLimits).
  bool privileged_peer = true;
  bool operator==(const JournalEntry&) const = default;
};

std::string encode_journal_entry(const JournalEntry& entry);
// nullopt for bytes that are not an entry this version wrote. `seq` is the store key.
std::optional<JournalEntry> decode_journal_entry(std::uint64_t seq, std::string_view bytes);

// The bytes an entry counts against the journal's byte bound.
inline std::size_t journal_entry_bytes(const JournalEntry& e) {
  return e.target.size() + e.content_type.size() + e.user_agent.size() + e.authorization.size() +
         e.object.size() + e.base.size() + e.body.size() + 64;
}

}  // namespace yurthub::cache
