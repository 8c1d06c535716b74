// cluster-info; see cluster_info.h.
#include "test/fake_apiserver/cluster_info.h"

#include <map>

#include "base/base64.h"
#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake {
namespace {

constexpr const char* kConfigMaps = "/configmaps";
constexpr const char* kNamespace = "kube-public";
constexpr const char* kName = "cluster-info";
constexpr std::string_view kJwsPrefix = "jws-kubeconfig-";

}  // namespace

std::string cluster_info_kubeconfig(std::string_view server, std::string_view ca_pem) {
  return "apiVersion: v1\n"
         "clusters:\n"
         "- cluster:\n"
         "    certificate-authority-data: " +
         base::encode_base64(ca_pem) +
         "\n"
         "    server: " +
         std::string(server) +
         "\n"
         "  name: \"\"\n"
         "contexts: null\n"
         "current-context: \"\"\n"
         "kind: Config\n"
         "preferences: {}\n"
         "users: null\n";
}

Status ensure_cluster_info(ApiHandlers& api, const Store& store, std::string_view server,
                           std::string_view ca_pem) {
  if (store.get(kConfigMaps, kNamespace, kName) != nullptr) return {};
  rapidjson::Document doc;
  doc.SetObject();
  auto& a = doc.GetAllocator();
  rapidjson::Value metadata(rapidjson::kObjectType);
  metadata.AddMember("name", rapidjson::StringRef(kName), a);
  metadata.AddMember("namespace", rapidjson::StringRef(kNamespace), a);
  doc.AddMember("metadata", metadata, a);
  rapidjson::Value data(rapidjson::kObjectType);
  std::string kubeconfig = cluster_info_kubeconfig(server, ca_pem);
  data.AddMember("kubeconfig", rapidjson::Value(kubeconfig.c_str(), a), a);
  doc.AddMember("data", data, a);
  const ResourceInfo* r = find_resource("", "v1", "configmaps");
  Reply reply = api.create_object(*r, "v1", kNamespace, std::move(doc), false);
  if (reply.status != 201) return make_error("creating kube-public/cluster-info: " + reply.body);
  return {};
}

bool sign_cluster_info(Store& store, SystemTime now) {
  const StoredObject* obj = store.get(kConfigMaps, kNamespace, kName);
  if (obj == nullptr) return false;
  auto doc = parse_json(*obj->json);
  if (!doc || !doc->IsObject() || !doc->HasMember("data") || !(*doc)["data"].IsObject()) {
    return false;
  }
  rapidjson::Value& data = (*doc)["data"];
  auto kubeconfig = data.FindMember("kubeconfig");
  if (kubeconfig == data.MemberEnd() || !kubeconfig->value.IsString()) return false;
  const std::string content = kubeconfig->value.GetString();
  // Every key, signatures recomputed; a JSON object's keys come out sorted, as from a Go map.
  std::map<std::string, std::string> next, old_sigs;
  for (const auto& m : data.GetObject()) {
    std::string key = m.name.GetString();
    std::string value = m.value.IsString() ? m.value.GetString() : "";
    if (key.starts_with(kJwsPrefix)) {
      old_sigs[key] = value;
    } else {
      next[key] = value;
    }
  }
  std::map<std::string, std::string> new_sigs;
  for (const auto& [id, secret] : signing_tokens(store, now)) {
    new_sigs[std::string(kJwsPrefix) + id] = detached_jws(content, id, secret);
  }
  if (new_sigs == old_sigs) return false;
  next.insert(new_sigs.begin(), new_sigs.end());
  auto& a = doc->GetAllocator();
  rapidjson::Value rebuilt(rapidjson::kObjectType);
  for (const auto& [k, v] : next) {
    rebuilt.AddMember(rapidjson::Value(k.c_str(), a), rapidjson::Value(v.c_str(), a), a);
  }
  data.Swap(rebuilt);
  store.put(kConfigMaps, kNamespace, kName, *doc);
  return true;
}

}  // namespace yurthub::fake
