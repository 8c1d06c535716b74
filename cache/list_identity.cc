// ListIdentity keys; see list_identity.h.
#include "cache/list_identity.h"

#include <array>

namespace yurthub::cache {
namespace {

constexpr char kSep = '\0';

}  // namespace

std::string ListIdentity::key() const {
  std::string out;
  out.reserve(component.size() + group.size() + version.size() + resource.size() +
              namespace_name.size() + label_selector.size() + field_selector.size() + 6);
  for (const std::string* part :
       {&component, &group, &version, &resource, &namespace_name, &label_selector}) {
    out += *part;
    out += kSep;
  }
  out += field_selector;
  return out;
}

std::optional<ListIdentity> ListIdentity::parse(std::string_view key) {
  std::array<std::string, 7> parts;
  std::size_t index = 0;
  for (std::size_t start = 0;; ++index) {
    const std::size_t end = index < 6 ? key.find(kSep, start) : key.size();
    if (end == std::string_view::npos || index >= parts.size()) return std::nullopt;
    parts[index] = std::string(key.substr(start, end - start));
    if (index == 6) break;
    start = end + 1;
  }
  return ListIdentity{parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], parts[6]};
}

ListIdentity ListIdentity::get_set() const {
  return ListIdentity{component, group, version, resource, "", "", std::string(kGetSet)};
}

std::string ListIdentity::component_prefix(std::string_view component) {
  std::string out(component);
  out += kSep;
  return out;
}

std::string ListIdentity::resource_prefix(std::string_view component, std::string_view group,
                                          std::string_view version, std::string_view resource) {
  std::string out;
  for (std::string_view part : {component, group, version, resource}) {
    out += part;
    out += kSep;
  }
  return out;
}

std::string ListIdentity::describe() const {
  std::string out =
      component + " " + resource + "." + version + "." + (group.empty() ? "core" : group);
  if (is_get_set()) return out + " (gets)";
  if (!namespace_name.empty()) out += " ns=" + namespace_name;
  if (!label_selector.empty()) out += " label=" + label_selector;
  if (!field_selector.empty()) out += " field=" + field_selector;
  return out;
}

}  // namespace yurthub::cache
