// serviceenvupdater filter; see service_env_updater.h. Called by the FilterChain
// (filters/registry.cc) for each Pod of a handled get, list or watch; stateless.
#include "filters/service_env_updater.h"

#include <string>
#include <string_view>

#include "filters/object_access.h"

namespace yurthub::filters {
namespace {

constexpr std::string_view kNamePrefix = "KUBERNETES_SERVICE_";

// Whether `json` holds the text KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT. One
// string_view::find per occurrence of the prefix (memchr for its 'K', which pod JSON rarely
// holds): 20 ns for a 2 KB pod, where std::boyer_moore_horspool_searcher took 270.
bool mentions_service_env(std::string_view json) {
  for (std::size_t at = json.find(kNamePrefix); at != std::string_view::npos;
       at = json.find(kNamePrefix, at + 1)) {
    const std::string_view suffix = json.substr(at + kNamePrefix.size(), 4);
    if (suffix == "HOST" || suffix == "PORT") return true;
  }
  return false;
}

// Rewrites the two variables in one container's env; returns whether anything changed.
bool update_container(rapidjson::Value& container, const std::string& host, const std::string& port,
                      rapidjson::Document::AllocatorType& allocator) {
  rapidjson::Value* env = find_member(container, "env");
  if (env == nullptr || !env->IsArray()) return false;
  bool changed = false;
  for (rapidjson::Value& var : env->GetArray()) {
    if (!var.IsObject()) continue;
    auto name = string_member(var, "name");
    const std::string* value = name == "KUBERNETES_SERVICE_HOST"   ? &host
                               : name == "KUBERNETES_SERVICE_PORT" ? &port
                                                                   : nullptr;
    if (value == nullptr) continue;
    // Like YurtHub only `value` is set; kubelet prefers a non-empty value over valueFrom.
    rapidjson::Value text = string_value(*value, allocator);
    changed |= set_member(var, "value", text, allocator);
  }
  return changed;
}

class ServiceEnvUpdaterFilter final : public ObjectFilter {
 public:
  std::string_view name() const override { return "serviceenvupdater"; }

  // YurtHub also registers `patch`: left out here, since a patch response goes back to its writer
  // (kubelet's status manager, which does not read env) rather than feeding a pod's environment.
  bool handles(const kube::RequestInfo& request) const override {
    return request_matches(request, "", {"v1"}, "pods",
                           {kube::Verb::Get, kube::Verb::List, kube::Verb::Watch});
  }

  bool ready(const ClusterView& view) const override { return !view.hub_host.empty(); }

  Verdict apply(rapidjson::Value& object, rapidjson::Document::AllocatorType& allocator,
                const ClusterView& view) const override {
    rapidjson::Value* spec = find_member(object, "spec");
    rapidjson::Value* containers = spec ? find_member(*spec, "containers") : nullptr;
    if (containers == nullptr || !containers->IsArray()) return Verdict::Keep;
    const std::string port = std::to_string(view.hub_port);
    bool changed = false;
    for (rapidjson::Value& container : containers->GetArray()) {
      changed |= update_container(container, view.hub_host, port, allocator);
    }
    return changed ? Verdict::Modified : Verdict::Keep;
  }

  // apply() changes only an env entry named KUBERNETES_SERVICE_HOST/PORT, and such a name is in
  // the pod's text literally (see the header), so a pod without that text is kept.
  bool may_change(std::string_view json) const override { return mentions_service_env(json); }
};

}  // namespace

std::unique_ptr<ObjectFilter> make_service_env_updater_filter() {
  return std::make_unique<ServiceEnvUpdaterFilter>();
}

}  // namespace yurthub::filters
