// The strategic merge patch table; see patch_strategies.h. Lists NOT here are atomic in v1.26 and
// are worth naming, because they are the ones a hand-written table gets wrong: Pod
// status.containerStatuses, initContainerStatuses and ephemeralContainerStatuses (no patchStrategy;
// kubelet always sends them whole), spec.tolerations, spec.readinessGates, a container's command,
// args and envFrom; Node spec.taints, status.images, volumesInUse, volumesAttached; Endpoints
// subsets; every list of EndpointSlices, Events and Leases.
#include "test/fake_apiserver/patch_strategies.h"

#include <array>

namespace yurthub::fake {
namespace {

struct Row {
  std::string_view kind;  // "" = every kind (ObjectMeta)
  std::string_view path;
  std::string_view merge_key;
};

constexpr std::array kRows = {
    // ObjectMeta: finalizers `patchStrategy:"merge"`, ownerReferences merge on uid.
    Row{"", "metadata.finalizers", ""},
    Row{"", "metadata.ownerReferences", "uid"},
    // PodSpec.
    Row{"Pod", "spec.volumes", "name"},  // "merge,retainKeys"
    Row{"Pod", "spec.containers", "name"},
    Row{"Pod", "spec.initContainers", "name"},
    Row{"Pod", "spec.ephemeralContainers", "name"},
    Row{"Pod", "spec.imagePullSecrets", "name"},
    Row{"Pod", "spec.hostAliases", "ip"},
    Row{"Pod", "spec.topologySpreadConstraints", "topologyKey"},
    Row{"Pod", "spec.resourceClaims", "name"},   // "merge,retainKeys" (alpha in 1.26)
    Row{"Pod", "spec.schedulingGates", "name"},  // alpha in 1.26
    // Container (and EphemeralContainerCommon, same tags).
    Row{"Pod", "spec.containers.ports", "containerPort"},
    Row{"Pod", "spec.containers.env", "name"},
    Row{"Pod", "spec.containers.volumeMounts", "mountPath"},
    Row{"Pod", "spec.containers.volumeDevices", "devicePath"},
    Row{"Pod", "spec.initContainers.ports", "containerPort"},
    Row{"Pod", "spec.initContainers.env", "name"},
    Row{"Pod", "spec.initContainers.volumeMounts", "mountPath"},
    Row{"Pod", "spec.initContainers.volumeDevices", "devicePath"},
    Row{"Pod", "spec.ephemeralContainers.ports", "containerPort"},
    Row{"Pod", "spec.ephemeralContainers.env", "name"},
    Row{"Pod", "spec.ephemeralContainers.volumeMounts", "mountPath"},
    Row{"Pod", "spec.ephemeralContainers.volumeDevices", "devicePath"},
    // PodStatus.
    Row{"Pod", "status.conditions", "type"},
    Row{"Pod", "status.podIPs", "ip"},
    // Node.
    Row{"Node", "spec.podCIDRs", ""},
    Row{"Node", "status.conditions", "type"},
    Row{"Node", "status.addresses", "type"},
    // Service: ports merge on port; status.conditions are metav1.Conditions (merge on type).
    Row{"Service", "spec.ports", "port"},
    Row{"Service", "status.conditions", "type"},
    // ServiceAccount: secrets merge on name (imagePullSecrets is atomic here, unlike PodSpec's).
    Row{"ServiceAccount", "secrets", "name"},
    // Namespace: status.conditions merge on type (spec.finalizers is atomic).
    Row{"Namespace", "status.conditions", "type"},
};

}  // namespace

FieldStrategy field_strategy(std::string_view kind, std::string_view path) {
  for (const Row& row : kRows) {
    if ((row.kind.empty() || row.kind == kind) && row.path == path) {
      return FieldStrategy{true, row.merge_key};
    }
  }
  return FieldStrategy{};
}

}  // namespace yurthub::fake
