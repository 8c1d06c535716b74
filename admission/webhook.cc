// The webhook's answers; see webhook.h.
#include "admission/webhook.h"

#include "admission/admission_review.h"
#include "admission/node_label_guard.h"
#include "admission/pod_affinity.h"
#include "base/log.h"
#include "kube/status.h"

namespace yurthub::admission {
namespace {

AdmissionResponse mutate_pod(const AdmissionRequest& request) {
  // Only pods are mutated: a review of another kind (a webhook configured wider than the
  // manifests in docs/examples) is allowed unchanged, never refused.
  if (request.kind != "Pod" || !request.object.IsObject()) return {};
  AdmissionResponse response;
  response.json_patch = host_network_exclusion_patch(request.object);
  if (!response.json_patch.empty()) {
    YH_LOG(Debug) << "mutate-pods: " << request.namespace_name << "/" << request.name
                  << ": excluding hostNetwork pools";
  }
  return response;
}

}  // namespace

WebhookAnswer answer_review(std::string_view path, std::string_view body,
                            const WebhookConfig& config) {
  const bool mutate = path == kMutatePodsPath;
  if (!mutate && path != kValidateNodesPath) {
    kube::ApiError error{404, "NotFound",
                         "the path \"" + std::string(path) + "\" is not served: use " +
                             std::string(kMutatePodsPath) + " or " +
                             std::string(kValidateNodesPath)};
    return {error.code, kube::status_body(error)};
  }
  auto request = parse_admission_review(body);
  if (!request) {
    YH_LOG(Warning) << std::string(path) << ": " << request.error().message;
    kube::ApiError error = kube::bad_request_error(request.error().message);
    return {error.code, kube::status_body(error)};
  }
  const AdmissionResponse response =
      mutate ? mutate_pod(*request) : check_node_label_change(*request, config.labeller_username);
  if (!response.allowed) {
    YH_LOG(Info) << "validate-nodes: refused " << request->username << "'s change of node "
                 << request->name << ": " << response.message;
  }
  return {200, admission_review_response(request->uid, response)};
}

}  // namespace yurthub::admission
