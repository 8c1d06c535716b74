// Registration of the cache's metric families; see cache_metrics.h.
#include "cache/cache_metrics.h"

namespace yurthub::cache {

CacheMetrics::CacheMetrics(base::MetricsRegistry& r)
    : lookups(r.counter("node_yurthub_cache_requests_total",
                        "Offline reads answered from the cache (hit) or not found in it (miss).",
                        {"verb", "result"})),
      offline_requests(r.counter("node_yurthub_offline_requests_total",
                                 "Requests answered locally because no apiserver was reachable.",
                                 {"verb", "code"})),
      objects(r.gauge("node_yurthub_cache_objects", "Objects in the cache, by component.",
                      {"component"})),
      bytes(r.gauge("node_yurthub_cache_bytes", "Bytes of object JSON in the cache, by component.",
                    {"component"})),
      batches(r.counter("node_yurthub_cache_write_batches_total",
                        "Group commits of the cache writer.", {})),
      ops(r.counter("node_yurthub_cache_written_ops_total",
                    "Cache operations (objects, events, list swaps) committed.", {})),
      failures(r.counter("node_yurthub_cache_write_failures_total",
                         "Cache writes that failed, by reason; the affected lists are marked "
                         "stale and re-listed.",
                         {"reason"})),
      out_of_order(r.counter("node_yurthub_cache_stale_events_total",
                             "Watch events or objects older than the cached object, not applied.",
                             {})),
      older_lists(r.counter("node_yurthub_cache_older_lists_total",
                            "Lists of a resourceVersion older than the cached set's (asked for "
                            "by version): relayed, not cached.",
                            {})),
      relisted_objects(r.counter("node_yurthub_cache_relisted_objects_total",
                                 "Objects of lists that replaced a complete cached list: held "
                                 "already (unchanged), written, or removed as no longer listed.",
                                 {"outcome"})),
      commit_duration(
          r.histogram("node_yurthub_cache_commit_duration_seconds",
                      "Duration of one group commit, including fsync.", {},
                      {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1})),
      queue_bytes(r.gauge("node_yurthub_cache_queue_bytes",
                          "Bytes of cache operations waiting for the writer.", {})),
      tap_queue_bytes(r.gauge("node_yurthub_cache_tap_queue_bytes",
                              "Bytes of relayed list bodies waiting to be read for the cache.",
                              {})),
      pending_ops(r.gauge("node_yurthub_cache_pending_ops",
                          "Cache operations queued or being committed (0: all committed).", {})),
      evicted(r.counter("node_yurthub_cache_evicted_lists_total",
                        "Cached lists dropped, least recently written first, because the cache "
                        "was over its bound on lists (count) or on its map size (size).",
                        {"reason"})),
      error_keys(r) {}

}  // namespace yurthub::cache
