// discardcloudservice filter; see discard_cloud_service.h. Called by the FilterChain
// (filters/registry.cc) for each Service of a handled list or watch; stateless.
#include "filters/discard_cloud_service.h"

#include "filters/object_access.h"

namespace yurthub::filters {
namespace {

// Since OpenYurt v1.5 (PR #1924) a LoadBalancer Service is dropped only when opted in with this
// annotation; before, every LoadBalancer Service was dropped unless `openyurt.io/skip-discard`.
constexpr const char* kDiscardAnnotation = "svc.openyurt.io/discard";

class DiscardCloudServiceFilter final : public ObjectFilter {
 public:
  std::string_view name() const override { return "discardcloudservice"; }

  bool handles(const kube::RequestInfo& request) const override {
    return request_matches(request, "", {"v1"}, "services", {kube::Verb::List, kube::Verb::Watch});
  }

  bool ready(const ClusterView&) const override { return true; }

  Verdict apply(rapidjson::Value& object, rapidjson::Document::AllocatorType&,
                const ClusterView&) const override {
    // The tunnel server's in-cluster Service is only reachable from the cloud.
    if (metadata_string(object, "namespace") == "kube-system" &&
        metadata_string(object, "name") == "x-tunnel-server-internal-svc") {
      return Verdict::Drop;
    }
    const rapidjson::Value* spec = find_member(object, "spec");
    if (spec != nullptr && string_member(*spec, "type") == "LoadBalancer" &&
        annotation(object, kDiscardAnnotation) == "true") {
      return Verdict::Drop;
    }
    return Verdict::Keep;
  }
};

}  // namespace

std::unique_ptr<ObjectFilter> make_discard_cloud_service_filter() {
  return std::make_unique<DiscardCloudServiceFilter>();
}

}  // namespace yurthub::filters
