// Registration of the filters' metric families; see filter_metrics.h.
#include "filters/filter_metrics.h"

namespace yurthub::filters {

FilterMetrics::FilterMetrics(base::MetricsRegistry& r)
    : objects(r.counter("node_yurthub_filter_objects_total",
                        "Objects each response filter saw, modified and dropped.",
                        {"filter", "result"})),
      parse_failures(r.counter("node_yurthub_filter_parse_failures_total",
                               "Objects a filter could not parse; passed through unchanged.",
                               {"filter"})),
      corrections(r.counter("node_yurthub_filter_corrections_total",
                            "Corrections of open watches after a Service or pool change.",
                            {"result"})),
      framing_failures(r.counter("node_yurthub_filter_framing_failures_total",
                                 "Filtered responses cut short because they were not valid JSON.",
                                 {})) {}

ObjectCounters FilterMetrics::object_counters(std::string_view filter) {
  std::lock_guard lock(mutex_);
  for (const auto& [name, counters] : known_)
    if (name == filter) return counters;
  const ObjectCounters counters{&objects.with({filter, "seen"}),
                                &objects.with({filter, "modified"}),
                                &objects.with({filter, "dropped"})};
  known_.emplace_back(std::string(filter), counters);
  return counters;
}

}  // namespace yurthub::filters
