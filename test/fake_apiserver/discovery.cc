// Discovery documents; see discovery.h. Shapes follow api.body, api-v1.body, apis.body and
// apis-discovery-v1.body in test/testdata/fixtures/apiserver-v1.26.
#include "test/fake_apiserver/discovery.h"

#include <algorithm>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "test/fake_apiserver/resources.h"

namespace yurthub::fake {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void write_sv(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void write_list(Writer& w, const char* key, const std::vector<std::string_view>& values) {
  if (values.empty()) return;
  w.Key(key);
  w.StartArray();
  for (auto v : values) write_sv(w, v);
  w.EndArray();
}

struct Entry {
  std::string name;
  const ResourceInfo* resource;
  const SubresourceInfo* sub;  // null for the main resource
};

void write_entry(Writer& w, const Entry& e) {
  const ResourceInfo& r = *e.resource;
  w.StartObject();
  w.Key("name");
  w.String(e.name);
  w.Key("singularName");
  write_sv(w, e.sub == nullptr && r.crd ? r.singular : std::string_view());
  w.Key("namespaced");
  w.Bool(r.namespaced);
  w.Key("kind");
  write_sv(w, e.sub != nullptr ? e.sub->kind : r.kind);
  w.Key("verbs");
  w.StartArray();
  for (auto v : e.sub != nullptr ? e.sub->verbs : r.verbs) write_sv(w, v);
  w.EndArray();
  if (e.sub == nullptr) {
    write_list(w, "shortNames", r.short_names);
    write_list(w, "categories", r.categories);
  }
  w.EndObject();
}

std::optional<std::string> resource_list(std::string_view group, std::string_view version) {
  std::vector<Entry> entries;
  for (const auto& r : resource_table()) {
    if (r.group != group || !r.serves(version)) continue;
    entries.push_back({std::string(r.name), &r, nullptr});
    for (const auto& s : r.subresources) {
      entries.push_back({std::string(r.name) + "/" + std::string(s.name), &r, &s});
    }
  }
  if (entries.empty()) return std::nullopt;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.name < b.name; });
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("kind");
  w.String("APIResourceList");
  if (!group.empty()) {  // the core list has no apiVersion (api-v1.body)
    w.Key("apiVersion");
    w.String("v1");
  }
  w.Key("groupVersion");
  w.String(group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version));
  w.Key("resources");
  w.StartArray();
  for (const auto& e : entries) write_entry(w, e);
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

// Groups in table order, each with its versions (preferred first).
std::vector<const ResourceInfo*> group_rows() {
  std::vector<const ResourceInfo*> rows;
  for (const auto& r : resource_table()) {
    if (r.group.empty()) continue;
    bool seen = std::any_of(rows.begin(), rows.end(),
                            [&](const ResourceInfo* x) { return x->group == r.group; });
    if (!seen) rows.push_back(&r);
  }
  return rows;
}

void write_group_version(Writer& w, std::string_view group, std::string_view version) {
  w.StartObject();
  w.Key("groupVersion");
  w.String(std::string(group) + "/" + std::string(version));
  w.Key("version");
  write_sv(w, version);
  w.EndObject();
}

void write_group_body(Writer& w, const ResourceInfo& r) {
  w.Key("name");
  write_sv(w, r.group);
  w.Key("versions");
  w.StartArray();
  for (auto v : r.versions) write_group_version(w, r.group, v);
  w.EndArray();
  w.Key("preferredVersion");
  write_group_version(w, r.group, r.versions.front());
}

std::string group_list() {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("kind");
  w.String("APIGroupList");
  w.Key("apiVersion");
  w.String("v1");
  w.Key("groups");
  w.StartArray();
  for (const ResourceInfo* r : group_rows()) {
    w.StartObject();
    write_group_body(w, *r);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

std::optional<std::string> group_document(std::string_view group) {
  for (const ResourceInfo* r : group_rows()) {
    if (r->group != group) continue;
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.StartObject();
    w.Key("kind");
    w.String("APIGroup");
    w.Key("apiVersion");
    w.String("v1");
    write_group_body(w, *r);
    w.EndObject();
    return std::string(buf.GetString(), buf.GetSize());
  }
  return std::nullopt;
}

std::string api_versions(std::string_view server_address) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("kind");
  w.String("APIVersions");
  w.Key("versions");
  w.StartArray();
  w.String("v1");
  w.EndArray();
  w.Key("serverAddressByClientCIDRs");
  w.StartArray();
  w.StartObject();
  w.Key("clientCIDR");
  w.String("0.0.0.0/0");
  w.Key("serverAddress");
  write_sv(w, server_address);
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace

std::optional<std::string> discovery_document(std::string_view path,
                                              std::string_view server_address) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (path == "/api") return api_versions(server_address);
  if (path == "/api/v1") return resource_list("", "v1");
  if (path == "/apis") return group_list();
  if (!path.starts_with("/apis/")) return std::nullopt;
  std::string_view rest = path.substr(6);
  auto slash = rest.find('/');
  if (slash == std::string_view::npos) return group_document(rest);
  std::string_view version = rest.substr(slash + 1);
  if (version.find('/') != std::string_view::npos) return std::nullopt;
  return resource_list(rest.substr(0, slash), version);
}

const std::string& version_body() {
  static const std::string body =
      "{\n"
      "  \"major\": \"1\",\n"
      "  \"minor\": \"26\",\n"
      "  \"gitVersion\": \"v1.26.1\",\n"
      "  \"gitCommit\": \"8f94681cd294aa8cfd3407b8191f6c70214973a4\",\n"
      "  \"gitTreeState\": \"archive\",\n"
      "  \"buildDate\": \"2026-11-21T13:30:19Z\",\n"
      "  \"goVersion\": \"go1.19.8\",\n"
      "  \"compiler\": \"gc\",\n"
      "  \"platform\": \"linux/amd64\"\n"
      "}";
  return body;
}

}  // namespace yurthub::fake
