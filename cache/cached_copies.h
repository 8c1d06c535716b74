// The cached copies of one object that one owner holds (cache/callers.h: the node, or a caller's
// credential): every component's sets of its resource may hold it (kubelet's pod list, its get
// set, coredns' list...). Offline writes change all of them, never another owner's, and offline
// creates and token requests ask whether the node has the object at all. Read in a view
// or in a CacheWriter task; used by cache/offline_writes.cc, offline_creates.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/list_identity.h"
#include "cache/store.h"

namespace yurthub::cache {

// One cached copy of an object: which set holds it, as whom.
struct CachedCopy {
  ListIdentity identity;
  ListRecord record;
  std::uint64_t resource_version = 0;
  std::string json;  // with kind and apiVersion
};

// Which object: its resource and name, and whose copies ("" = the node's).
struct ObjectRef {
  std::string_view group, version, resource, namespace_name, name;
  std::string_view owner = {};
};

// Every cached copy of `ref` its owner holds, in every component's sets of its resource.
std::vector<CachedCopy> find_copies(ReadView& view, const ObjectRef& ref);

// The copy to apply a write to: the newest, `component`'s own on a tie. Null when none.
const CachedCopy* newest_copy(const std::vector<CachedCopy>& copies, std::string_view component);

}  // namespace yurthub::cache
