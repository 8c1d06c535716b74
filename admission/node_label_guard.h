// The decision of /validate-nodes: the label nodepool.openyurt.io/hostnetwork is the node
// labeller's (admission/node_labeller.h) to set, and nobody else may add, change or remove it on
// an existing node, as yurt-manager's node validation refuses changes to it
// (pkg/yurtmanager/webhook/node/v1/node_validation.go). Pure; called by admission/webhook.cc.
//
// The labeller is recognised by the username kube-apiserver authenticated it as
// (request.userInfo.username), given to pool-admission by --labeller-username: by default the
// ServiceAccount its Deployment runs as, system:serviceaccount:kube-system:pool-admission.
// A CREATE is allowed whatever it carries: the labeller corrects a new node's label as soon as it
// sees the node, and refusing a node's registration would keep its kubelet out of the cluster.
#pragma once

#include <string>
#include <string_view>

#include "admission/admission_review.h"

namespace yurthub::admission {

inline constexpr std::string_view kDefaultLabellerUsername =
    "system:serviceaccount:kube-system:pool-admission";

// The answer to a review of a Node: allowed, or refused with 403 Forbidden and a message naming
// the node, the label and who may change it. A review of anything but an UPDATE of a Node (or
// whose objects are not objects) is allowed: this webhook guards only the one label.
AdmissionResponse check_node_label_change(const AdmissionRequest& request,
                                          std::string_view labeller_username);

}  // namespace yurthub::admission
