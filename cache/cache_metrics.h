// CacheMetrics: the cache's metric families, registered in the hub's registry at startup and
// shared by the writer (commits, failures), the taps (drops) and the offline path (hits,
// misses, offline requests). Thread-safe (base/metrics.h).
#pragma once

#include "base/metrics.h"
#include "cache/error_keys.h"

namespace yurthub::cache {

struct CacheMetrics {
  explicit CacheMetrics(base::MetricsRegistry& registry);

  // node_yurthub_cache_requests_total{verb,result="hit"|"miss"}: offline reads by outcome.
  base::CounterFamily& lookups;
  // node_yurthub_offline_requests_total{verb,code}: requests answered by the cache.
  base::CounterFamily& offline_requests;
  // node_yurthub_cache_objects{component} and _bytes{component}: refreshed every minute.
  base::GaugeFamily& objects;
  base::GaugeFamily& bytes;
  // node_yurthub_cache_write_batches_total, node_yurthub_cache_written_ops_total.
  base::CounterFamily& batches;
  base::CounterFamily& ops;
  // node_yurthub_cache_write_failures_total{reason}: commit, object (one object refused),
  // queue_full (dropped before reaching the disk), framing (the response could not be read).
  base::CounterFamily& failures;
  // node_yurthub_cache_stale_events_total: events older than the stored object, not applied.
  base::CounterFamily& out_of_order;
  // node_yurthub_cache_older_lists_total: lists asked for at a resourceVersion older than the
  // cached set's, relayed but not cached.
  base::CounterFamily& older_lists;
  // node_yurthub_cache_relisted_objects_total{outcome="unchanged"|"written"|"removed"}: what
  // the lists that replaced a complete cached list did to its objects (relists.h).
  base::CounterFamily& relisted_objects;
  // node_yurthub_cache_commit_duration_seconds: one group commit, including fsync.
  base::HistogramFamily& commit_duration;
  // node_yurthub_cache_queue_bytes: bytes waiting for the writer.
  base::GaugeFamily& queue_bytes;
  // node_yurthub_cache_tap_queue_bytes: relayed list bodies waiting to be digested (tap_queue.h).
  base::GaugeFamily& tap_queue_bytes;
  // node_yurthub_cache_pending_ops: operations queued or being committed; 0 once everything
  // relayed so far is on disk.
  base::GaugeFamily& pending_ops;
  // node_yurthub_cache_evicted_lists_total{reason="count"|"size"}: lists dropped at the bounds.
  base::CounterFamily& evicted;
  // node_yurthub_error_keys_count and node_yurthub_error_keys_persistency_status (error_keys.h).
  ErrorKeys error_keys;
};

}  // namespace yurthub::cache
