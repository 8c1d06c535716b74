// FilterAssignment: which filters each component gets. YurtHub's defaults (registry.h), plus the
// `kube-system/yurt-hub-cfg` keys named after a filter (`servicetopology: "cilium-agent, cilium"`,
// or the legacy `filter_servicetopology`), minus --disabled-resource-filters; nothing at all with
// --enable-resource-filter=false. The hub's own requests (`yurthub`) are never filtered. A pure
// value, rebuilt by the FilterManager when the ConfigMap changes and published as a snapshot.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "filters/filter.h"

namespace yurthub::filters {

struct FilterFlags {
  bool enabled = true;                // --enable-resource-filter
  std::vector<std::string> disabled;  // --disabled-resource-filters ("*" = all)
  bool cloud_mode = false;            // --working-mode=cloud turns the edge-only filters off
};

class FilterAssignment {
 public:
  // `config` is the ConfigMap's data; keys that name no filter are ignored.
  static FilterAssignment build(const FilterFlags& flags,
                                const std::map<std::string, std::string>& config);

  // The filters for `component` (lowercased User-Agent before '/'), in chain order.
  std::vector<const ObjectFilter*> for_component(std::string_view component) const;
  // Those of them that handle `info` (ObjectFilter::handles), in chain order. Asks each filter
  // first, which is cheaper than the component lookup and, for most requests, says no.
  std::vector<const ObjectFilter*> for_request(const kube::RequestInfo& info) const;
  // "servicetopology=coredns,kube-proxy; masterservice=kubelet" for logs ("none" when empty).
  std::string describe() const;
  bool operator==(const FilterAssignment& other) const { return describe() == other.describe(); }

 private:
  struct Entry {
    const ObjectFilter* filter;
    std::set<std::string, std::less<>> components;  // transparent: looked up per request
  };
  template <class Handles>
  std::vector<const ObjectFilter*> select(std::string_view component, Handles handles) const;
  std::vector<Entry> entries_;  // enabled filters, in chain order
};

// Splits a ConfigMap value "a, b/v1,C" into component names {"a", "b", "c"} (trimmed,
// lowercased, anything from '/' on removed, as YurtHub 1.6 did).
std::set<std::string> parse_component_list(std::string_view value);

}  // namespace yurthub::filters
