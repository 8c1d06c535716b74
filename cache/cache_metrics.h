// CacheMetrics: the cache's metric families, registered in the hub's registry at startup and
// shared by the writer (commits, failures), the taps (drops) and the offline path (hits,
// misses, offline requests). Thread-safe (hub/metrics.h).
#pragma once

#include "hub/metrics.h"

namespace yurthub::cache {

struct CacheMetrics {
  explicit CacheMetrics(hub::MetricsRegistry& registry);

  // node_yurthub_cache_requests_total{verb,result="hit"|"miss"}: offline reads by outcome.
  hub::CounterFamily& lookups;
  // node_yurthub_offline_requests_total{verb,code}: requests answered by the cache.
  hub::CounterFamily& offline_requests;
  // node_yurthub_cache_objects{component} and _bytes{component}: refreshed every minute.
  hub::GaugeFamily& objects;
  hub::GaugeFamily& bytes;
  // node_yurthub_cache_write_batches_total, node_yurthub_cache_written_ops_total.
  hub::CounterFamily& batches;
  hub::CounterFamily& ops;
  // node_yurthub_cache_write_failures_total{reason}: commit, object (one object refused),
  // queue_full (dropped before reaching the disk), framing (the response could not be read).
  hub::CounterFamily& failures;
  // node_yurthub_cache_stale_events_total: events older than the stored object, not applied.
  hub::CounterFamily& out_of_order;
  // node_yurthub_cache_commit_duration_seconds: one group commit, including fsync.
  hub::HistogramFamily& commit_duration;
  // node_yurthub_cache_queue_bytes: bytes waiting for the writer.
  hub::GaugeFamily& queue_bytes;
  // node_yurthub_cache_evicted_lists_total{reason="count"|"size"}: lists dropped at the bounds.
  hub::CounterFamily& evicted;
};

}  // namespace yurthub::cache
