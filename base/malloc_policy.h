// How much memory the hub's allocator (glibc malloc) keeps when the hub frees it. Called once by
// cmd/yurthub's main, before the hub starts a thread.
//
// A big list a cached client reads (kubelet's pods after a restart, kube-proxy's EndpointSlices)
// is copied into the cache's tap in 256 KiB pieces, allocated on the worker and freed on another
// thread once the cache has them. glibc gives the top of an arena back to the system once more
// than its trim threshold is free there, and that threshold follows the largest block it mmapped:
// 640 KiB after the first piece. So every such list gave its tens of MB back, and the next list
// faulted them in again (about 4,800 page faults per 19 MiB list, then on the tap thread, a third
// of its time). Freed memory is now kept for reuse up to kKeptFreeBytes at the top of each arena,
// and only blocks of kOwnMappingBytes or more get their own mapping (given back when freed). The
// cache writer still trims once it has been idle five seconds after big lists (cache_writer.cc),
// so what is kept is kept while lists come.
#pragma once

#include <cstddef>

namespace yurthub::base {

inline constexpr std::size_t kKeptFreeBytes = 32u << 20;
inline constexpr std::size_t kOwnMappingBytes = 4u << 20;

// Sets the two thresholds. False if the allocator refused them (another malloc, e.g. a
// sanitizer's, has its own policy): the hub runs as before.
bool keep_freed_memory_for_reuse();

}  // namespace yurthub::base
