// `yurthub cache ...`: the operator's window into the node's object cache: which lists each
// component has cached, how fresh and complete they are, the stored JSON of one object, and how
// much space it all takes. Called by cmd/yurthub.cc; opens the store read-only, so it is safe to
// run while the hub is running (LMDB readers never block the writer). Single-threaded.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace yurthub::cache {

// Runs one cache subcommand. `args` are the words after `cache` (e.g. {"ls", "kubelet/pods"});
// `cache_dir` is --disk-cache-path. Results go to `out`, errors and usage to `err`.
// Returns the process exit status: 0 success, 1 failure (no cache directory, cache unreadable,
// object not cached), 2 bad usage.
int run_cache_command(const std::vector<std::string>& args, const std::string& cache_dir,
                      std::ostream& out, std::ostream& err);

// `yurthub journal ls`: the offline writes waiting to be replayed (cache/journal.h), oldest
// first. Same arguments, output streams and exit statuses as run_cache_command.
int run_journal_command(const std::vector<std::string>& args, const std::string& cache_dir,
                        std::ostream& out, std::ostream& err);

}  // namespace yurthub::cache
