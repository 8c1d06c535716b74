// servicetopology filter; see service_topology.h. Called by the FilterChain (filters/registry.cc)
// for each EndpointSlice or Endpoints object of a handled list or watch, and again for open
// watches when the ClusterView changes (reactive); stateless, shared by every worker thread.
#include "filters/service_topology.h"

#include <optional>
#include <string>

#include "filters/cluster_view.h"
#include "filters/object_access.h"

namespace yurthub::filters {
namespace {

constexpr const char* kServiceNameLabel = "kubernetes.io/service-name";
constexpr const char* kHostnameKey = "kubernetes.io/hostname";
constexpr const char* kNodePoolKey = "openyurt.io/nodepool";
constexpr const char* kZoneKey = "kubernetes.io/zone";

// Which nodes' endpoints this node may see: its own, or those of its pool.
struct NodeMatcher {
  const ClusterView* view;
  bool pool;

  bool operator()(std::optional<std::string_view> node) const {
    // An endpoint without a node name is dropped (OpenYurt #2593: the Go code used to panic).
    if (!node || node->empty()) return false;
    if (!pool) return *node == view->node_name;
    return view->pool_nodes.count(std::string(*node)) > 0;
  }
};

// The matcher for the Service `ns/service`; nullopt when the object must stay unchanged.
std::optional<NodeMatcher> matcher_for(const ClusterView& view, std::string_view ns,
                                       std::string_view service) {
  if (!view.services || service.empty()) return std::nullopt;
  std::string key;
  key.append(ns).append("/").append(service);
  auto it = view.services->find(key);
  if (it == view.services->end() || !it->second) return std::nullopt;
  std::optional<std::string_view> topology = annotation(*it->second, kTopologyKeysAnnotation);
  if (topology == kHostnameKey) return NodeMatcher{&view, false};
  if (topology == kNodePoolKey || topology == kZoneKey) {
    // A node in no pool falls back to hostname topology, as YurtHub does.
    if (view.pool_name.empty()) return NodeMatcher{&view, false};
    // The node names a pool whose NodePool is unknown: membership cannot be decided.
    if (!view.pool_known) return std::nullopt;
    return NodeMatcher{&view, true};
  }
  return std::nullopt;
}

// The node of an EndpointSlice endpoint: v1 `nodeName`; v1beta1 `nodeName` when set, else
// `topology["kubernetes.io/hostname"]` (v1 has no `topology` field, so one rule serves both).
std::optional<std::string_view> slice_endpoint_node(const rapidjson::Value& endpoint) {
  if (auto node = string_member(endpoint, "nodeName")) return node;
  const rapidjson::Value* topology = find_member(endpoint, "topology");
  if (topology == nullptr) return std::nullopt;
  return string_member(*topology, kHostnameKey);
}

bool all_objects(const rapidjson::Value& array) {
  for (const rapidjson::Value& element : array.GetArray()) {
    if (!element.IsObject()) return false;
  }
  return true;
}

Verdict filter_slice(rapidjson::Value& slice, const NodeMatcher& keep) {
  rapidjson::Value* endpoints = find_member(slice, "endpoints");
  if (endpoints == nullptr || !endpoints->IsArray() || !all_objects(*endpoints)) {
    return Verdict::Keep;  // null (no endpoints) or malformed: nothing we can filter
  }
  auto removed = retain_if(*endpoints, [&](const rapidjson::Value& endpoint) {
    return keep(slice_endpoint_node(endpoint));
  });
  return removed > 0 ? Verdict::Modified : Verdict::Keep;
}

// `addresses` / `notReadyAddresses` of an Endpoints subset: absent, null or an array of objects.
bool address_list_ok(const rapidjson::Value& subset, const char* key) {
  const rapidjson::Value* list = find_member(subset, key);
  return list == nullptr || list->IsNull() || (list->IsArray() && all_objects(*list));
}

bool address_list_empty(const rapidjson::Value& subset, const char* key) {
  const rapidjson::Value* list = find_member(subset, key);
  return list == nullptr || !list->IsArray() || list->Empty();
}

// v1 Endpoints (YurtHub up to v1.6): filters each subset's addresses and notReadyAddresses by
// nodeName and drops subsets left with neither.
Verdict filter_endpoints(rapidjson::Value& endpoints, const NodeMatcher& keep) {
  rapidjson::Value* subsets = find_member(endpoints, "subsets");
  if (subsets == nullptr || !subsets->IsArray()) return Verdict::Keep;
  for (const rapidjson::Value& subset : subsets->GetArray()) {
    if (!subset.IsObject() || !address_list_ok(subset, "addresses") ||
        !address_list_ok(subset, "notReadyAddresses")) {
      return Verdict::Keep;  // malformed: leave it whole rather than half-filtered
    }
  }
  auto keep_address = [&](const rapidjson::Value& address) {
    return keep(string_member(address, "nodeName"));
  };
  rapidjson::SizeType removed = 0;
  for (rapidjson::Value& subset : subsets->GetArray()) {
    for (const char* key : {"addresses", "notReadyAddresses"}) {
      rapidjson::Value* list = find_member(subset, key);
      if (list != nullptr && list->IsArray()) removed += retain_if(*list, keep_address);
    }
  }
  removed += retain_if(*subsets, [](const rapidjson::Value& subset) {
    return !address_list_empty(subset, "addresses") ||
           !address_list_empty(subset, "notReadyAddresses");
  });
  return removed > 0 ? Verdict::Modified : Verdict::Keep;
}

class ServiceTopologyFilter final : public ObjectFilter {
 public:
  std::string_view name() const override { return "servicetopology"; }

  bool handles(const kube::RequestInfo& request) const override {
    return request_matches(request, "discovery.k8s.io", {"v1", "v1beta1"}, "endpointslices",
                           {kube::Verb::List, kube::Verb::Watch}) ||
           request_matches(request, "", {"v1"}, "endpoints", {kube::Verb::List, kube::Verb::Watch});
  }

  bool ready(const ClusterView& view) const override {
    return view.services_synced && view.node_synced && view.pools_synced;
  }

  bool reactive() const override { return true; }

  Verdict apply(rapidjson::Value& object, rapidjson::Document::AllocatorType&,
                const ClusterView& view) const override {
    // List items carry no kind, so the two resources are told apart by shape: an EndpointSlice
    // has `endpoints` (null when empty), an Endpoints object `subsets`.
    std::string_view ns = metadata_string(object, "namespace");
    if (find_member(object, "endpoints") != nullptr) {
      auto service = label(object, kServiceNameLabel);
      auto matcher = matcher_for(view, ns, service.value_or(std::string_view{}));
      return matcher ? filter_slice(object, *matcher) : Verdict::Keep;
    }
    if (find_member(object, "subsets") != nullptr) {
      auto matcher = matcher_for(view, ns, metadata_string(object, "name"));
      return matcher ? filter_endpoints(object, *matcher) : Verdict::Keep;
    }
    return Verdict::Keep;
  }
};

}  // namespace

std::unique_ptr<ObjectFilter> make_service_topology_filter() {
  return std::make_unique<ServiceTopologyFilter>();
}

}  // namespace yurthub::filters
