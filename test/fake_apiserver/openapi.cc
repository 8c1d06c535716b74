// Minimal OpenAPI v3; see openapi.h.
#include "test/fake_apiserver/openapi.h"

#include <algorithm>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "test/fake_apiserver/resources.h"

namespace yurthub::fake {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;
// The documents never change, so one hash serves; clients cache by it.
constexpr const char* kHash = "F2A4C0DE5EEDFA4E";

std::string gv_path(std::string_view group, std::string_view version) {
  if (group.empty()) return "api/" + std::string(version);
  return "apis/" + std::string(group) + "/" + std::string(version);
}

void write_sv(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

std::string root() {
  std::vector<std::string> paths;
  for (const auto& r : resource_table()) {
    for (auto v : r.versions) {
      std::string p = gv_path(r.group, v);
      if (std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
    }
  }
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("paths");
  w.StartObject();
  for (const auto& p : paths) {
    w.Key(p.data(), static_cast<rapidjson::SizeType>(p.size()));
    w.StartObject();
    w.Key("serverRelativeURL");
    w.String("/openapi/v3/" + p + "?hash=" + kHash);
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

void write_patch_path(Writer& w, const ResourceInfo& r, std::string_view version) {
  std::string path = "/" + gv_path(r.group, version) + "/";
  if (r.namespaced) path += "namespaces/{namespace}/";
  path += std::string(r.name) + "/{name}";
  w.Key(path.data(), static_cast<rapidjson::SizeType>(path.size()));
  w.StartObject();
  w.Key("patch");
  w.StartObject();
  w.Key("parameters");
  w.StartArray();
  w.StartObject();
  w.Key("name");
  w.String("fieldValidation");
  w.Key("in");
  w.String("query");
  w.Key("schema");
  w.StartObject();
  w.Key("type");
  w.String("string");
  w.EndObject();
  w.EndObject();
  w.EndArray();
  w.Key("x-kubernetes-action");
  w.String("patch");
  w.Key("x-kubernetes-group-version-kind");
  w.StartObject();
  w.Key("group");
  write_sv(w, r.group);
  w.Key("version");
  write_sv(w, version);
  w.Key("kind");
  write_sv(w, r.kind);
  w.EndObject();
  w.EndObject();
  w.EndObject();
}

std::optional<std::string> group_version(std::string_view gv) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("openapi");
  w.String("3.0.0");
  w.Key("info");
  w.StartObject();
  w.Key("title");
  w.String("Kubernetes");
  w.Key("version");
  w.String("v1.26.1");
  w.EndObject();
  w.Key("paths");
  w.StartObject();
  bool any = false;
  for (const auto& r : resource_table()) {
    if (!r.stored) continue;
    for (auto v : r.versions) {
      if (gv_path(r.group, v) != gv) continue;
      write_patch_path(w, r, v);
      any = true;
    }
  }
  w.EndObject();
  w.Key("components");
  w.StartObject();
  w.Key("schemas");
  w.StartObject();
  w.EndObject();
  w.EndObject();
  w.EndObject();
  if (!any) return std::nullopt;
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace

std::optional<std::string> openapi_v3_document(std::string_view path) {
  constexpr std::string_view kPrefix = "/openapi/v3";
  if (path == kPrefix || path == "/openapi/v3/") return root();
  if (!path.starts_with("/openapi/v3/")) return std::nullopt;
  return group_version(path.substr(kPrefix.size() + 1));
}

}  // namespace yurthub::fake
