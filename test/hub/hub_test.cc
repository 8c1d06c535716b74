// config_map_data (hub/hub.h): the yurt-hub-cfg data the hub's config listeners get from the
// config informer's objects.
#include "hub/hub.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "base/json_parse.h"

namespace yurthub::hub {
namespace {

net::ObjectMap objects(std::initializer_list<std::string_view> jsons) {
  net::ObjectMap out;
  int i = 0;
  for (std::string_view json : jsons) {
    auto doc = std::make_shared<rapidjson::Document>();
    EXPECT_TRUE(base::parse_json(json, *doc)) << json;
    out.emplace("kube-system/yurt-hub-cfg-" + std::to_string(i++), std::move(doc));
  }
  return out;
}

using Data = std::map<std::string, std::string>;

TEST(ConfigMapData, TheStringValuesOfData) {
  EXPECT_EQ(config_map_data(objects({R"({"kind":"ConfigMap","metadata":{"name":"yurt-hub-cfg"},
      "data":{"cache_agents":"foo, bar","servicetopology":"cilium-agent","x":1,"y":null}})"})),
            (Data{{"cache_agents", "foo, bar"}, {"servicetopology", "cilium-agent"}}));
  EXPECT_EQ(config_map_data(objects({R"({"kind":"ConfigMap"})", R"({"data":[]})", "[]"})), Data{});
  EXPECT_EQ(config_map_data({}), Data{});
}

// A value was cut at its first NUL (found by test/fuzz/yurt_hub_cfg_fuzz.cc): "a\u0000b, c" gave
// cache_agents "a", losing "c", where YurtHub reads the whole string.
TEST(ConfigMapData, AValueWithANulIsKeptWhole) {
  const Data data =
      config_map_data(objects({R"({"data":{"cache_agents":"a\u0000b, c","k\u0000":"v"}})"}));
  EXPECT_EQ(data,
            (Data{{"cache_agents", std::string("a\0b, c", 6)}, {std::string("k\0", 2), "v"}}));
}

}  // namespace
}  // namespace yurthub::hub
