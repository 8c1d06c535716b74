// The kube-controller-manager (and yurt-manager) loops the fake runs in-process, driven by the
// Store's observer: the CSR approver (--csr-auto-approve: every new CSR gets an Approved condition,
// reason AutoApproved, as yurt-manager's csrapprover gives yurthub CSRs), the CSR signer (an
// approved, not denied, not failed CSR without a certificate is signed at once by csr_signer.h:
// status.certificate, or a Failed condition if the signer's policy refuses it; unknown signer
// names stay unsigned) and the bootstrap signer (cluster-info re-signed on every change to a
// kube-system Secret or to cluster-info). Each reaction is a separate write, so watchers see one
// MODIFIED event per step. Owned by Server; single-threaded like the Store.
#pragma once

#include <deque>
#include <functional>
#include <memory>

#include "test/fake_apiserver/bootstrap_token.h"
#include "test/fake_apiserver/csr_signer.h"
#include "test/fake_apiserver/store.h"

namespace yurthub::fake {

struct ControllerOptions {
  bool csr_auto_approve = false;
  std::shared_ptr<const CsrSigner> signer;  // null: approved CSRs stay unsigned
};

class Controllers {
 public:
  using Now = std::function<SystemTime()>;

  // Registers itself as `store`'s observer; `store` must outlive it.
  Controllers(
      Store& store, ControllerOptions options,
      Now now = [] { return std::chrono::system_clock::now(); });
  Controllers(const Controllers&) = delete;
  Controllers& operator=(const Controllers&) = delete;

 private:
  void on_event(const Event& e);
  void handle(const Event& e);
  void reconcile_csr(const std::string& name, bool created);

  Store& store_;
  ControllerOptions options_;
  Now now_;
  // Writes made while reacting come back through the observer: queued and handled in order
  // after the current one, not recursively.
  std::deque<Event> pending_;
  bool draining_ = false;
};

}  // namespace yurthub::fake
