// The webhook's answers, without the transport: a POST body to /mutate-pods or /validate-nodes
// becomes an HTTP status and JSON body. A well-formed AdmissionReview is always answered 200 with
// an AdmissionReview (allowed, patched or refused); anything else gets a Kubernetes Status
// (kube/status.h), as kube-apiserver then reports the webhook call as failed and applies the
// configuration's failurePolicy. Pure; called by admission/webhook_server.cc for every request
// and by the unit tests with recorded reviews. Thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace yurthub::admission {

inline constexpr std::string_view kMutatePodsPath = "/mutate-pods";
inline constexpr std::string_view kValidateNodesPath = "/validate-nodes";

struct WebhookConfig {
  std::string labeller_username;  // who may change the hostnetwork label (node_label_guard.h)
};

struct WebhookAnswer {
  unsigned status = 200;
  std::string body;  // application/json: an AdmissionReview, or a Status when status != 200
};

// Answers the review in `body` posted to `path`. A path other than the two above is 404; a body
// that is not an AdmissionReview v1 is 400 with the parse error in the Status message.
WebhookAnswer answer_review(std::string_view path, std::string_view body,
                            const WebhookConfig& config);

}  // namespace yurthub::admission
