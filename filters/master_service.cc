// masterservice filter; see master_service.h. Called by the FilterChain (filters/registry.cc) for
// each Service of a handled list or watch; stateless, shared by every worker thread.
#include "filters/master_service.h"

#include "filters/object_access.h"

namespace yurthub::filters {
namespace {

class MasterServiceFilter final : public ObjectFilter {
 public:
  std::string_view name() const override { return "masterservice"; }

  bool handles(const kube::RequestInfo& request) const override {
    return request_matches(request, "", {"v1"}, "services", {kube::Verb::List, kube::Verb::Watch});
  }

  bool ready(const ClusterView& view) const override { return !view.hub_host.empty(); }

  Verdict apply(rapidjson::Value& object, rapidjson::Document::AllocatorType& allocator,
                const ClusterView& view) const override {
    if (metadata_string(object, "namespace") != "default" ||
        metadata_string(object, "name") != "kubernetes") {
      return Verdict::Keep;
    }
    rapidjson::Value* spec = find_member(object, "spec");
    if (spec == nullptr || !spec->IsObject()) return Verdict::Keep;

    bool changed = false;
    rapidjson::Value cluster_ip = string_value(view.hub_host, allocator);
    changed |= set_member(*spec, "clusterIP", cluster_ip, allocator);
    rapidjson::Value cluster_ips(rapidjson::kArrayType);
    cluster_ips.PushBack(string_value(view.hub_host, allocator), allocator);
    changed |= set_member(*spec, "clusterIPs", cluster_ips, allocator);

    // Only `port` moves: targetPort is what the apiserver listens on, which the hub does not use.
    changed |=
        set_https_port(find_member(*spec, "ports"), view.hub_port, /*first_only=*/false, allocator);
    return changed ? Verdict::Modified : Verdict::Keep;
  }
};

}  // namespace

std::unique_ptr<ObjectFilter> make_master_service_filter() {
  return std::make_unique<MasterServiceFilter>();
}

}  // namespace yurthub::filters
