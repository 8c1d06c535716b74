// The allocator's thresholds; see malloc_policy.h.
#include "base/malloc_policy.h"

#include <malloc.h>

namespace yurthub::base {

bool keep_freed_memory_for_reuse() {
  // Setting either turns glibc's moving thresholds off, so both are set.
  return ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(kOwnMappingBytes)) == 1 &&
         ::mallopt(M_TRIM_THRESHOLD, static_cast<int>(kKeptFreeBytes)) == 1;
}

}  // namespace yurthub::base
