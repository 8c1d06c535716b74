// forwardkubesvctraffic filter; see forward_kube_svc_traffic.h. Called by the FilterChain
// (filters/registry.cc) for each EndpointSlice of a handled list or watch; stateless.
#include "filters/forward_kube_svc_traffic.h"

#include "filters/object_access.h"

namespace yurthub::filters {
namespace {

class ForwardKubeSvcTrafficFilter final : public ObjectFilter {
 public:
  std::string_view name() const override { return "forwardkubesvctraffic"; }

  bool handles(const kube::RequestInfo& request) const override {
    return request_matches(request, "discovery.k8s.io", {"v1"}, "endpointslices",
                           {kube::Verb::List, kube::Verb::Watch});
  }

  bool ready(const ClusterView& view) const override { return !view.hub_host.empty(); }

  Verdict apply(rapidjson::Value& object, rapidjson::Document::AllocatorType& allocator,
                const ClusterView& view) const override {
    // Matched by label rather than by name: the apiserver names the slice "kubernetes" but any
    // slice of the kubernetes Service must not leak the real apiserver addresses.
    if (metadata_string(object, "namespace") != "default" ||
        label(object, "kubernetes.io/service-name") != "kubernetes") {
      return Verdict::Keep;
    }
    const bool ipv6 = view.hub_host.find(':') != std::string::npos;
    // A slice of the other family cannot carry the hub's address (YurtHub logs and keeps it).
    if (string_member(object, "addressType") != (ipv6 ? "IPv6" : "IPv4")) return Verdict::Keep;

    // As YurtHub: the first "https" port only.
    bool changed =
        set_https_port(find_member(object, "ports"), view.hub_port, /*first_only=*/true, allocator);

    rapidjson::Value addresses(rapidjson::kArrayType);
    addresses.PushBack(string_value(view.hub_host, allocator), allocator);
    rapidjson::Value conditions(rapidjson::kObjectType);
    conditions.AddMember("ready", true, allocator);
    rapidjson::Value endpoint(rapidjson::kObjectType);
    endpoint.AddMember("addresses", addresses, allocator);
    endpoint.AddMember("conditions", conditions, allocator);
    rapidjson::Value endpoints(rapidjson::kArrayType);
    endpoints.PushBack(endpoint, allocator);
    changed |= set_member(object, "endpoints", endpoints, allocator);
    return changed ? Verdict::Modified : Verdict::Keep;
  }
};

}  // namespace

std::unique_ptr<ObjectFilter> make_forward_kube_svc_traffic_filter() {
  return std::make_unique<ForwardKubeSvcTrafficFilter>();
}

}  // namespace yurthub::filters
