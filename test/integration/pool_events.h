// What the pool tests read from a watch of EndpointSlices (pool_sharing_test.cc,
// leader_hub_test.cc): the last event per object, with the nodes of its endpoints.
#pragma once

#include <rapidjson/document.h>

#include <map>
#include <set>
#include <string>
#include <utility>

#include "test/integration/http_client.h"

namespace yurthub::test {

using Nodes = std::set<std::string>;

// Name -> {event type, endpoint nodes} of the last event about it.
inline std::map<std::string, std::pair<std::string, Nodes>> last_events(const WatchStream& w) {
  std::map<std::string, std::pair<std::string, Nodes>> out;
  for (const auto& line : w.events()) {
    rapidjson::Document e;
    e.Parse(line.c_str());
    if (e.HasParseError() || !e.IsObject() || !e.HasMember("object")) continue;
    const auto& o = e["object"];
    if (!o.HasMember("metadata") || !o["metadata"].HasMember("name")) continue;
    Nodes nodes;
    if (o.HasMember("endpoints") && o["endpoints"].IsArray()) {
      for (const auto& ep : o["endpoints"].GetArray()) nodes.insert(ep["nodeName"].GetString());
    }
    out[o["metadata"]["name"].GetString()] = {e["type"].GetString(), nodes};
  }
  return out;
}

// The metadata.resourceVersion of a list body ("" if it is not JSON).
inline std::string list_rv(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  return doc.HasParseError() ? "" : doc["metadata"]["resourceVersion"].GetString();
}

}  // namespace yurthub::test
