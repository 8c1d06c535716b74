// ListIdentity keys; see list_identity.h.
#include "cache/list_identity.h"

#include <array>

namespace yurthub::cache {
namespace {

constexpr char kSep = '\0';

// kOwnerMark owner \0, or nothing for the node's sets.
std::string owner_prefix(std::string_view owner) {
  if (owner.empty()) return {};
  std::string out(1, ListIdentity::kOwnerMark);
  out += owner;
  out += kSep;
  return out;
}

}  // namespace

std::string ListIdentity::key() const {
  std::string out = owner_prefix(owner);
  out.reserve(out.size() + component.size() + group.size() + version.size() + resource.size() +
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
  std::string owner;
  if (key.starts_with(kOwnerMark)) {
    const auto end = key.find(kSep);
    if (end == std::string_view::npos || end == 1) return std::nullopt;
    owner = std::string(key.substr(1, end - 1));
    key.remove_prefix(end + 1);
  }
  std::array<std::string, 7> parts;
  std::size_t index = 0;
  for (std::size_t start = 0;; ++index) {
    const std::size_t end = index < 6 ? key.find(kSep, start) : key.size();
    if (end == std::string_view::npos || index >= parts.size()) return std::nullopt;
    parts[index] = std::string(key.substr(start, end - start));
    if (index == 6) break;
    start = end + 1;
  }
  return ListIdentity{parts[0], parts[1], parts[2], parts[3],
                      parts[4], parts[5], parts[6], std::move(owner)};
}

ListIdentity ListIdentity::get_set() const {
  return ListIdentity{component, group, version, resource, "", "", std::string(kGetSet), owner};
}

std::string ListIdentity::get_set_key(std::string_view component, std::string_view group,
                                      std::string_view version, std::string_view resource,
                                      std::string_view owner) {
  std::string out = resource_prefix(component, group, version, resource, owner);
  out += kSep;  // no namespace
  out += kSep;  // no label selector
  out += kGetSet;
  return out;
}

std::string ListIdentity::component_prefix(std::string_view component, std::string_view owner) {
  std::string out = owner_prefix(owner);
  out += component;
  out += kSep;
  return out;
}

std::string ListIdentity::resource_prefix(std::string_view component, std::string_view group,
                                          std::string_view version, std::string_view resource,
                                          std::string_view owner) {
  std::string out = owner_prefix(owner);
  for (std::string_view part : {component, group, version, resource}) {
    out += part;
    out += kSep;
  }
  return out;
}

std::string ListIdentity::describe() const {
  std::string out =
      component + " " + resource + "." + version + "." + (group.empty() ? "core" : group);
  if (is_get_set()) {
    out += " (gets)";
  } else {
    if (!namespace_name.empty()) out += " ns=" + namespace_name;
    if (!label_selector.empty()) out += " label=" + label_selector;
    if (!field_selector.empty()) out += " field=" + field_selector;
  }
  if (!owner.empty()) out += " as " + owner;
  return out;
}

}  // namespace yurthub::cache
