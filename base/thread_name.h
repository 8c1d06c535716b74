// name_this_thread: names the calling thread as `top -H`, `ps -L`, perf and /proc/<pid>/task/*/comm
// show it, so an operator can tell the hub's workers, cache writer and cache tap apart. Called at
// the start of each thread the hub starts (hub/worker.cc, cache/, hub/certificate/).
#pragma once

#include <pthread.h>

namespace yurthub::base {

// `name`: at most 15 characters (the kernel's limit); a longer one leaves the name unchanged.
inline void name_this_thread(const char* name) { ::pthread_setname_np(::pthread_self(), name); }

}  // namespace yurthub::base
