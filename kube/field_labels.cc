// Field selectors the apiserver supports per resource, and their values; see field_labels.h.
#include "kube/field_labels.h"

#include <algorithm>
#include <vector>

#include "base/json_parse.h"

namespace yurthub::kube {
namespace {

struct Conversion {
  std::string_view group, resource;
  std::vector<std::string_view> fields;  // besides metadata.name and metadata.namespace
  // Cluster-scoped kinds' conversions refuse metadata.namespace (Node, Namespace and
  // CertificateSigningRequest list only metadata.name).
  bool namespaced = true;
};

// The kinds with their own conversion function (their error says "field label not supported").
// Where a later release added a field, it is accepted too: a filtered offline list is the lesser
// harm than refusing a selector the node's apiserver may take.
const std::vector<Conversion>& conversions() {
  static const std::vector<std::string_view> kPodFields = {"spec.nodeName",
                                                           "spec.restartPolicy",
                                                           "spec.schedulerName",
                                                           "spec.serviceAccountName",
                                                           "spec.hostNetwork",
                                                           "status.phase",
                                                           "status.podIP",
                                                           "status.podIPs",
                                                           "status.nominatedNodeName",
                                                           "spec.host"};
  static const std::vector<std::string_view> kEventFields = {"involvedObject.kind",
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
  // events.k8s.io/v1 maps its own names onto the core Event's field set; the cache keeps the v1
  // object, so it selects on these names directly.
  static const std::vector<std::string_view> kEventsV1Fields = {
      "regarding.kind",       "regarding.namespace",
      "regarding.name",       "regarding.uid",
      "regarding.apiVersion", "regarding.resourceVersion",
      "regarding.fieldPath",  "reason",
      "reportingController",  "type"};
  static const std::vector<Conversion> kConversions = {
      {"", "pods", kPodFields},
      {"", "nodes", {"spec.unschedulable"}, false},
      {"", "events", kEventFields},
      {"events.k8s.io", "events", kEventsV1Fields},
      {"", "namespaces", {"status.phase"}, false},
      {"", "secrets", {"type"}},
      {"", "replicationcontrollers", {"status.replicas"}},
      {"apps", "replicasets", {"status.replicas"}},
      {"batch", "jobs", {"status.successful"}},
      {"certificates.k8s.io", "certificatesigningrequests", {"spec.signerName"}, false},
  };
  return kConversions;
}

// The JSON member at dotted `path`, or nullptr (also when a parent is not an object).
const rapidjson::Value* member_at(const rapidjson::Value& object, std::string_view path) {
  const rapidjson::Value* current = &object;
  while (true) {
    size_t dot = path.find('.');
    std::string_view segment = path.substr(0, dot);
    if (!current->IsObject()) return nullptr;
    auto it =
        current->FindMember(rapidjson::Value(rapidjson::StringRef(segment.data(), segment.size())));
    if (it == current->MemberEnd()) return nullptr;
    current = &it->value;
    if (dot == std::string_view::npos) return current;
    path.remove_prefix(dot + 1);
  }
}

// A JSON member as a selector compares it: see selectable_field in field_labels.h.
std::string json_text(const rapidjson::Value* value) {
  if (value == nullptr || value->IsNull()) return "";
  if (value->IsString()) return std::string(value->GetString(), value->GetStringLength());
  return base::to_json(*value);
}

// A Go bool or integer field printed by fmt.Sprint/strconv: absent (or null) is its zero value.
std::string scalar_text(const rapidjson::Value* value, const char* zero) {
  return value == nullptr || value->IsNull() ? zero : json_text(value);
}

// status.podIP of the field set is the internal type's PodIPs[0].IP. Converting v1 to internal,
// status.podIP (when set) wins over status.podIPs, and fills PodIPs when podIPs is empty
// (Convert_v1_PodStatus_To_core_PodStatus); objects the apiserver serves have both agreeing.
std::string pod_ip(const rapidjson::Value& pod) {
  const rapidjson::Value* ip = member_at(pod, "status.podIP");
  if (ip != nullptr && ip->IsString() && ip->GetStringLength() > 0) return json_text(ip);
  const rapidjson::Value* ips = member_at(pod, "status.podIPs");
  if (ips == nullptr || !ips->IsArray() || ips->Empty()) return "";
  return json_text(member_at((*ips)[0], "ip"));
}

}  // namespace

std::optional<std::string> unsupported_field_label(std::string_view group,
                                                   std::string_view resource,
                                                   const FieldSelector& selector) {
  const Conversion* conversion = nullptr;
  for (const Conversion& c : conversions()) {
    if (c.group == group && c.resource == resource) conversion = &c;
  }
  for (const FieldRequirement& r : selector.requirements()) {
    if (r.path == "metadata.name") continue;
    if (r.path == "metadata.namespace" && (conversion == nullptr || conversion->namespaced)) {
      continue;
    }
    if (conversion == nullptr) {
      return "\"" + r.path +
             "\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"";
    }
    if (std::find(conversion->fields.begin(), conversion->fields.end(), r.path) ==
        conversion->fields.end()) {
      return "field label not supported: " + r.path;
    }
  }
  return std::nullopt;
}

std::string selectable_field(std::string_view group, std::string_view resource,
                             const rapidjson::Value& object, std::string_view path) {
  if (group.empty() && resource == "nodes" && path == "spec.unschedulable") {
    // NodeToSelectableFields: fmt.Sprint(node.Spec.Unschedulable), "false" when absent.
    return scalar_text(member_at(object, path), "false");
  }
  if (group.empty() && resource == "pods") {
    // ToSelectableFields (pkg/registry/core/pod/strategy.go).
    if (path == "status.podIP") return pod_ip(object);
    if (path == "status.podIPs") return "";  // converted as a label, but not in the field set
    if (path == "spec.host") return json_text(member_at(object, "spec.nodeName"));  // conversion
    if (path == "spec.hostNetwork") return scalar_text(member_at(object, path), "false");
  }
  if (group.empty() && resource == "events" && path == "source") {
    // ToSelectableFields (pkg/registry/core/event/strategy.go): Source.Component, else
    // ReportingController (reportingComponent in v1's JSON).
    std::string component = json_text(member_at(object, "source.component"));
    return component.empty() ? json_text(member_at(object, "reportingComponent")) : component;
  }
  if (path == "status.replicas" && ((group.empty() && resource == "replicationcontrollers") ||
                                    (group == "apps" && resource == "replicasets"))) {
    return scalar_text(member_at(object, path), "0");  // strconv.Itoa(int(Status.Replicas))
  }
  if (group == "batch" && resource == "jobs" && path == "status.successful") {
    return scalar_text(member_at(object, "status.succeeded"), "0");  // Status.Succeeded
  }
  return json_text(member_at(object, path));
}

}  // namespace yurthub::kube
