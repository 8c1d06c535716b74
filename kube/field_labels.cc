// Field selectors the apiserver supports per resource; see field_labels.h.
#include "kube/field_labels.h"

#include <algorithm>
#include <vector>

namespace yurthub::kube {
namespace {

struct Conversion {
  std::string_view group, resource;
  std::vector<std::string_view> fields;  // besides metadata.name and metadata.namespace
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
  static const std::vector<Conversion> kConversions = {
      {"", "pods", kPodFields},
      {"", "nodes", {"spec.unschedulable"}},
      {"", "events", kEventFields},
      {"events.k8s.io", "events", kEventFields},
      {"", "namespaces", {"status.phase"}},
      {"", "secrets", {"type"}},
      {"", "replicationcontrollers", {"status.replicas"}},
      {"apps", "replicasets", {"status.replicas"}},
      {"batch", "jobs", {"status.successful"}},
      {"certificates.k8s.io", "certificatesigningrequests", {"spec.signerName"}},
  };
  return kConversions;
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
    if (r.path == "metadata.name" || r.path == "metadata.namespace") continue;
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

}  // namespace yurthub::kube
