// FilterMetrics: the filters' metric families, registered once in the hub's registry and updated
// by every FilterChain (any worker thread; the counters are atomic).
#pragma once

#include "base/metrics.h"

namespace yurthub::filters {

struct FilterMetrics {
  explicit FilterMetrics(base::MetricsRegistry& registry);

  // node_yurthub_filter_objects_total{filter,result="seen"|"modified"|"dropped"}.
  base::CounterFamily& objects;
  // node_yurthub_filter_parse_failures_total{filter}: objects a filter would have seen but that
  // could not be parsed (they pass through unchanged).
  base::CounterFamily& parse_failures;
  // node_yurthub_filter_corrections_total{result="event"|"relist"}: corrected watch events sent
  // after a Service or pool change, and watches ended for a re-list because they could not be.
  base::CounterFamily& corrections;
  // node_yurthub_filter_framing_failures_total: responses cut short because they were not
  // well-formed JSON.
  base::CounterFamily& framing_failures;
};

}  // namespace yurthub::filters
