// The byte encodings of the LMDB store (format in lmdb_store.h): big-endian integers (so set ids
// sort numerically), object keys (set id, namespace, NUL, name) and ListRecord values. Pure,
// LMDB-free, so lmdb_store.cc keeps only what talks to LMDB. Used by lmdb_store.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "cache/store.h"

namespace yurthub::cache {

void append_be(std::string& out, std::uint64_t value, int bytes);
// REQUIRES: in.size() >= bytes.
std::uint64_t read_be(std::string_view in, std::size_t bytes);
std::string u32_value(std::uint32_t value);
// The key prefix of every object of a set.
std::string set_prefix(std::uint32_t set);
std::string object_key(std::uint32_t set, std::string_view namespace_name, std::string_view name);
// The (namespace, name) of an object key (views into `key`); nullopt for a key too short to
// hold a set id or without the separator.
std::optional<std::pair<std::string_view, std::string_view>> split_object_key(std::string_view key);
std::string encode_list_record(const ListRecord& record);
// nullopt for a record of another version or a damaged one.
std::optional<ListRecord> decode_list_record(std::string_view in);
// An identity key in an error message: its description, or its bytes with NULs shown as '/'.
std::string printable_identity(std::string_view key);

}  // namespace yurthub::cache
