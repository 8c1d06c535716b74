// Field label conversion and field values; see field_labels.h.
#include "test/fake_apiserver/field_labels.h"

#include <algorithm>
#include <array>
#include <vector>

#include "test/fake_apiserver/json_util.h"
#include "test/fake_apiserver/resources.h"

namespace yurthub::fake {
namespace {

struct Conversion {
  std::string_view group, resource;
  std::vector<std::string_view> fields;
};

const std::vector<std::string_view> kCoreEventFields = {"metadata.name",
                                                        "metadata.namespace",
                                                        "involvedObject.kind",
                                                        "involvedObject.namespace",
                                                        "involvedObject.name",
                                                        "involvedObject.uid",
                                                        "involvedObject.apiVersion",
                                                        "involvedObject.resourceVersion",
                                                        "involvedObject.fieldPath",
                                                        "reason",
                                                        "reportingComponent",
                                                        "source",
                                                        "type"};

// The kinds the fake serves that register their own conversion function in v1.26. Note
// spec.hostNetwork for pods came in v1.28, and nodes and namespaces do not take
// metadata.namespace.
const std::vector<Conversion>& conversions() {
  static const std::vector<Conversion> table = {
      {"",
       "pods",
       {"metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy",
        "spec.schedulerName", "spec.serviceAccountName", "status.phase", "status.podIP",
        "status.podIPs", "status.nominatedNodeName", "spec.host"}},
      {"", "nodes", {"metadata.name", "spec.unschedulable"}},
      {"", "namespaces", {"metadata.name", "status.phase"}},
      {"", "secrets", {"metadata.name", "metadata.namespace", "type"}},
      {"certificates.k8s.io", "certificatesigningrequests", {"metadata.name", "spec.signerName"}},
      {"", "events", kCoreEventFields},
      // events.k8s.io/v1 maps its own names onto the core Event's field set; the fake stores the
      // v1 object, so it selects on these names directly.
      {"events.k8s.io",
       "events",
       {"metadata.name", "metadata.namespace", "regarding.kind", "regarding.namespace",
        "regarding.name", "regarding.uid", "regarding.apiVersion", "regarding.resourceVersion",
        "regarding.fieldPath", "reason", "reportingController", "type"}},
  };
  return table;
}

const rapidjson::Value* at_path(const rapidjson::Value& object, std::string_view path) {
  const rapidjson::Value* v = &object;
  while (v != nullptr) {
    std::size_t dot = path.find('.');
    std::string_view name = path.substr(0, dot);
    if (!v->IsObject()) return nullptr;
    auto it = v->FindMember(rapidjson::Value(rapidjson::StringRef(name.data(), name.size())));
    v = it == v->MemberEnd() ? nullptr : &it->value;
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
  }
  return v;
}

std::string scalar_text(const rapidjson::Value* v) {
  if (v == nullptr || v->IsNull()) return "";
  if (v->IsString()) return std::string(v->GetString(), v->GetStringLength());
  if (v->IsBool()) return v->GetBool() ? "true" : "false";
  return to_json(*v);
}

}  // namespace

Result<std::string> convert_field_label(const ResourceInfo& resource, std::string_view field) {
  if (resource.crd) {
    if (field == "metadata.name" || (resource.namespaced && field == "metadata.namespace")) {
      return std::string(field);
    }
    return make_error("field label not supported: " + std::string(field));
  }
  for (const Conversion& c : conversions()) {
    if (c.group != resource.group || c.resource != resource.name) continue;
    if (std::find(c.fields.begin(), c.fields.end(), field) == c.fields.end()) {
      return make_error("field label not supported: " + std::string(field));
    }
    return std::string(field == "spec.host" ? "spec.nodeName" : field);
  }
  if (field == "metadata.name" || field == "metadata.namespace") return std::string(field);
  return make_error(
      "\"" + std::string(field) +
      "\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"");
}

std::string field_value(const rapidjson::Value& object, std::string_view field) {
  if (field == "status.podIP") {
    const rapidjson::Value* ips = at_path(object, "status.podIPs");
    if (ips != nullptr && ips->IsArray() && !ips->Empty())
      return scalar_text(at_path((*ips)[0], "ip"));
    return scalar_text(at_path(object, "status.podIP"));
  }
  if (field == "status.podIPs") return "";  // accepted by the conversion, absent from the set
  if (field == "spec.unschedulable") {
    const rapidjson::Value* v = at_path(object, field);
    return v != nullptr && v->IsBool() && v->GetBool() ? "true" : "false";
  }
  if (field == "source" && object.HasMember("involvedObject")) {
    std::string component = scalar_text(at_path(object, "source.component"));
    return component.empty() ? scalar_text(at_path(object, "reportingComponent")) : component;
  }
  return scalar_text(at_path(object, field));
}

}  // namespace yurthub::fake
