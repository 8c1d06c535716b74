// Building the component -> filters assignment; see filter_config.h.
#include "filters/filter_config.h"

#include <algorithm>
#include <cctype>

#include "filters/registry.h"

namespace yurthub::filters {

std::set<std::string> parse_component_list(std::string_view value) {
  std::set<std::string> out;
  while (!value.empty()) {
    const auto comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    item = item.substr(0, item.find('/'));
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front())))
      item.remove_prefix(1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back())))
      item.remove_suffix(1);
    if (item.empty()) continue;
    std::string name(item);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    out.insert(std::move(name));
  }
  return out;
}

FilterAssignment FilterAssignment::build(const FilterFlags& flags,
                                         const std::map<std::string, std::string>& config) {
  FilterAssignment a;
  if (!flags.enabled) return a;
  const auto& disabled = flags.disabled;
  if (std::find(disabled.begin(), disabled.end(), "*") != disabled.end()) return a;
  for (const RegisteredFilter& r : registered_filters()) {
    const std::string name(r.filter->name());
    if (std::find(disabled.begin(), disabled.end(), name) != disabled.end()) continue;
    if (flags.cloud_mode && r.edge_only) continue;
    Entry e{r.filter.get(), {r.default_components.begin(), r.default_components.end()}};
    for (const std::string& key : {name, "filter_" + name}) {
      if (auto it = config.find(key); it != config.end()) {
        auto extra = parse_component_list(it->second);
        e.components.insert(extra.begin(), extra.end());
      }
    }
    a.entries_.push_back(std::move(e));
  }
  return a;
}

template <class Handles>
std::vector<const ObjectFilter*> FilterAssignment::select(std::string_view component,
                                                          Handles handles) const {
  std::vector<const ObjectFilter*> out;
  if (component.empty() || component == "yurthub") return out;
  for (const Entry& e : entries_) {
    if (handles(*e.filter) && e.components.contains(component)) out.push_back(e.filter);
  }
  return out;
}

std::vector<const ObjectFilter*> FilterAssignment::for_component(std::string_view component) const {
  return select(component, [](const ObjectFilter&) { return true; });
}

std::vector<const ObjectFilter*> FilterAssignment::for_request(
    const kube::RequestInfo& info) const {
  return select(info.component, [&info](const ObjectFilter& f) { return f.handles(info); });
}

std::string FilterAssignment::describe() const {
  std::string out;
  for (const Entry& e : entries_) {
    if (!out.empty()) out += "; ";
    out += std::string(e.filter->name()) + "=";
    bool first = true;
    for (const std::string& c : e.components) {
      if (!first) out += ",";
      out += c;
      first = false;
    }
  }
  return out.empty() ? "none" : out;
}

}  // namespace yurthub::filters
