// The table of built-in filters: chain order, default components, and whether cloud mode turns a
// filter off (docs/reference/yurthub.md §6.2). Read by the FilterManager; docs/filters.md mirrors
// it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "filters/filter.h"

namespace yurthub::filters {

struct RegisteredFilter {
  std::unique_ptr<ObjectFilter> filter;
  std::vector<std::string> default_components;  // User-Agent names before the first '/'
  bool edge_only = false;                       // off in --working-mode=cloud (as YurtHub)
};

// Every built-in filter, in chain order. Built once; never modified.
const std::vector<RegisteredFilter>& registered_filters();

}  // namespace yurthub::filters
