// Fuzz target for the reading of ConfigMap kube-system/yurt-hub-cfg, which anyone allowed to edit
// it in the cluster controls and every edge hub follows live: hub/hub.h config_map_data (the
// informer's objects to the key -> value map the listeners get), then what cmd/yurthub.cc's
// listeners do with that map: filters/filter_config.h FilterAssignment::build (keys named after a
// filter, parse_component_list) and cache/cache_policy.h CachePolicy::set_extra_agents
// (`cache_agents`). The input's NUL-separated parts are up to two objects as the informer holds
// them (JSON, through the hub's bounded parse). Oracles: every key and value handed on is one a
// ConfigMap holds; each component a filter key lists gets that filter; each agent listed is
// cached, and the defaults stay.
#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "base/json_parse.h"
#include "cache/cache_policy.h"
#include "filters/filter_config.h"
#include "filters/registry.h"
#include "hub/hub.h"
#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

namespace {

std::string_view text(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

// Whether some ConfigMap in `objects` has `key`: `value` in its data.
bool held(const net::ObjectMap& objects, const std::string& key, const std::string& value) {
  for (const auto& [name, object] : objects) {
    if (!object->IsObject()) continue;
    const auto data = object->FindMember("data");
    if (data == object->MemberEnd() || !data->value.IsObject()) continue;
    for (const auto& m : data->value.GetObject()) {
      if (m.value.IsString() && text(m.name) == key && text(m.value) == value) return true;
    }
  }
  return false;
}

void check_components(const std::set<std::string>& components) {
  for (const std::string& c : components) {
    fuzz::check(!c.empty() && c.find_first_of(",/") == std::string::npos &&
                    !std::isspace(static_cast<unsigned char>(c.front())) &&
                    !std::isspace(static_cast<unsigned char>(c.back())),
                "a component name that is not trimmed, or holds ',' or '/'");
    for (char ch : c) fuzz::check(!std::isupper(static_cast<unsigned char>(ch)), "not lowercased");
  }
}

void check_filters(const std::map<std::string, std::string>& data) {
  const filters::FilterAssignment edge = filters::FilterAssignment::build({}, data);
  (void)edge.describe();
  for (const filters::RegisteredFilter& r : filters::registered_filters()) {
    const std::string name(r.filter->name());
    for (const std::string& key : {name, "filter_" + name}) {
      const auto it = data.find(key);
      if (it == data.end()) continue;
      const std::set<std::string> components = filters::parse_component_list(it->second);
      check_components(components);
      for (const std::string& c : components) {
        if (c == "yurthub") continue;  // never filtered
        const auto chosen = edge.for_component(c);
        fuzz::check(std::find(chosen.begin(), chosen.end(), r.filter.get()) != chosen.end(),
                    "a component the ConfigMap names does not get the filter");
      }
    }
  }
  filters::FilterFlags cloud;
  cloud.cloud_mode = true;
  cloud.disabled = {"servicetopology"};
  (void)filters::FilterAssignment::build(cloud, data).describe();
}

void check_agents(const std::map<std::string, std::string>& data) {
  cache::CachePolicy policy;
  const auto agents = data.find("cache_agents");
  policy.set_extra_agents(agents == data.end() ? "" : agents->second);
  for (const std::string& name : cache::CachePolicy::default_agents()) {
    fuzz::check(policy.is_agent(name), "a default agent is no longer cached");
  }
  for (const std::string& name : policy.agents()) {
    fuzz::check(!name.empty(), "an empty agent");
    const bool control = std::any_of(name.begin(), name.end(),
                                     [](char c) { return static_cast<unsigned char>(c) < 0x20; });
    if (!control) fuzz::check(policy.is_agent(name), "a listed agent is not cached");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  net::ObjectMap objects;
  const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 2);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto doc = std::make_shared<rapidjson::Document>();
    if (!base::parse_json(parts[i], *doc)) continue;
    objects.emplace("kube-system/yurt-hub-cfg-" + std::to_string(i), std::move(doc));
  }
  const std::map<std::string, std::string> config = hub::config_map_data(objects);
  for (const auto& [key, value] : config) {
    fuzz::check(held(objects, key, value), "a key or value no ConfigMap holds");
  }
  check_filters(config);
  check_agents(config);
  return 0;
}
