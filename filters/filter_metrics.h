// FilterMetrics: the filters' metric families, registered once in the hub's registry and updated
// by every FilterChain (any worker thread; the counters are atomic).
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/metrics.h"

namespace yurthub::filters {

// node_yurthub_filter_objects_total's three series of one filter.
struct ObjectCounters {
  base::Counter* seen;
  base::Counter* modified;
  base::Counter* dropped;
};

struct FilterMetrics {
  explicit FilterMetrics(base::MetricsRegistry& registry);

  // The object counters of the filter named `filter`: looked up in `objects` once per name, then
  // found among the few names seen so far (a FilterChain asks for them per response, and three
  // label lookups cost more than a small GET's filtering).
  ObjectCounters object_counters(std::string_view filter);

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

 private:
  std::mutex mutex_;  // guards known_
  std::vector<std::pair<std::string, ObjectCounters>> known_;
};

}  // namespace yurthub::filters
