// Seed loading and pod generation; see seed.h.
#include "test/fake_apiserver/seed.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "test/fake_apiserver/json_util.h"
#include "test/fake_apiserver/resources.h"

namespace yurthub::fake {
namespace {

Result<std::size_t> create_item(ApiHandlers& api, const rapidjson::Value& item, std::size_t i) {
  auto where = [i](const std::string& why) {
    return make_error("item " + std::to_string(i) + ": " + why);
  };
  if (!item.IsObject()) return where("not an object");
  auto av = item.FindMember("apiVersion");
  auto kind = item.FindMember("kind");
  if (av == item.MemberEnd() || !av->value.IsString() || kind == item.MemberEnd() ||
      !kind->value.IsString()) {
    return where("missing apiVersion or kind");
  }
  const ResourceInfo* r = find_resource_by_kind(av->value.GetString(), kind->value.GetString());
  if (r == nullptr || !r->stored) {
    return where(std::string("unsupported kind ") + kind->value.GetString() + " in " +
                 av->value.GetString());
  }
  std::string_view group, version;
  split_api_version(av->value.GetString(), group, version);
  rapidjson::Document doc;
  doc.CopyFrom(item, doc.GetAllocator());
  std::string ns = r->namespaced ? meta_string(doc, "namespace") : "";
  if (r->namespaced && ns.empty()) ns = "default";
  Reply reply = api.create_object(*r, version, ns, std::move(doc), /*keep_meta=*/true);
  if (reply.status != 201) return where(reply.body);
  return std::size_t{1};
}

}  // namespace

Result<std::size_t> load_seed_text(ApiHandlers& api, std::string_view text) {
  auto doc = parse_json(text);
  if (!doc) return make_error("not JSON: " + doc.error().message);
  const rapidjson::Value* items = nullptr;
  if (doc->IsArray()) {
    items = &*doc;
  } else if (doc->IsObject() && doc->HasMember("items") && (*doc)["items"].IsArray()) {
    items = &(*doc)["items"];
  } else {
    return make_error("want a JSON array of objects or a List with items");
  }
  std::size_t n = 0;
  for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
    auto created = create_item(api, (*items)[i], i);
    if (!created) return created.error();
    n += *created;
  }
  return n;
}

Result<std::size_t> load_seed_file(ApiHandlers& api, const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error("cannot read seed file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto n = load_seed_text(api, ss.str());
  if (!n) return make_error(path + ": " + n.error().message);
  return n;
}

Result<std::size_t> generate_pods(ApiHandlers& api, std::size_t count, std::size_t bytes,
                                  const std::string& node) {
  const ResourceInfo* ns_info = find_resource("", "v1", "namespaces");
  const ResourceInfo* pods = find_resource("", "v1", "pods");
  auto ns_doc = parse_json(R"({"metadata":{"name":"bulk"}})");
  Reply ns_reply = api.create_object(*ns_info, "v1", "", std::move(*ns_doc), false);
  if (ns_reply.status != 201 && ns_reply.status != 409) return make_error(ns_reply.body);
  for (std::size_t i = 1; i <= count; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "bulk-pod-%06zu", i);
    std::string pod = std::string(R"({"metadata":{"name":")") + name +
                      R"(","namespace":"bulk","labels":{"app":"bulk"},)" +
                      R"("annotations":{"fake-apiserver/padding":"PAD"}},)" +
                      R"("spec":{"nodeName":")" + node +
                      R"(","containers":[{"name":"app","image":"registry.k8s.io/pause:3.9"}]},)" +
                      R"("status":{"phase":"Running"}})";
    // ~120 bytes of metadata the apiserver adds (uid, resourceVersion, creationTimestamp...).
    std::size_t base = pod.size() + 120;
    std::size_t pad = bytes > base ? bytes - base : 0;
    pod.replace(pod.find("PAD"), 3, std::string(pad, 'x'));
    auto doc = parse_json(pod);
    if (!doc) return make_error("generated pod is not JSON: " + doc.error().message);
    Reply reply = api.create_object(*pods, "v1", "bulk", std::move(*doc), false);
    if (reply.status != 201) return make_error(reply.body);
  }
  return count;
}

}  // namespace yurthub::fake
