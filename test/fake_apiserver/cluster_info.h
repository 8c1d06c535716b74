// The kube-public/cluster-info ConfigMap: what kubeadm creates for token discovery (data.kubeconfig
// with one unnamed cluster: the apiserver's URL and CA) and what kube-controller-manager's
// bootstrap signer (pkg/controller/bootstrap/bootstrapsigner.go) keeps in it: one
// data["jws-kubeconfig-<id>"] per bootstrap token allowed to sign. Server::start calls
// ensure_cluster_info() (--cluster-info-server); controllers.cc calls sign_cluster_info() on
// every change to a kube-system Secret or to the ConfigMap. Single-threaded like the Store.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"
#include "test/fake_apiserver/api_handlers.h"
#include "test/fake_apiserver/bootstrap_token.h"
#include "test/fake_apiserver/store.h"

namespace yurthub::fake {

// The kubeconfig YAML kubeadm writes into cluster-info (clientcmd.Write of a Config with one
// cluster named ""): server and certificate-authority-data (base64 of `ca_pem`).
std::string cluster_info_kubeconfig(std::string_view server, std::string_view ca_pem);

// Creates kube-public/cluster-info with that kubeconfig unless the ConfigMap exists (seeds win).
Status ensure_cluster_info(ApiHandlers& api, const Store& store, std::string_view server,
                           std::string_view ca_pem);

// The bootstrap signer's signConfigMap(): recomputes every jws-kubeconfig-<id> of cluster-info
// from signing_tokens(), dropping signatures of tokens gone; writes (one MODIFIED event) only if
// a signature changed. Returns true if it wrote. No ConfigMap or no data.kubeconfig: nothing.
bool sign_cluster_info(Store& store, SystemTime now);

}  // namespace yurthub::fake
