// Follows a kubeconfig whose credentials someone else renews: kubelet's
// /etc/kubernetes/kubelet.conf in --bootstrap-mode=kubeletcertificate (kubelet rotates
// kubelet-client-current.pem under it), or a --kubeconfig an operator's tooling renews, with a
// certificate or a `tokenFile` (a projected or rotated token, which client-go re-reads). Every
// `period` the file and the files it names are read again; a changed client certificate replaces
// the hub's TLS context for new connections (open watches keep theirs), a changed token is sent
// from the next request on. A file that does not load (half-written, removed) is logged and the
// last good credentials kept. Created by cmd/yurthub.cc; runs on its own thread, where the serving
// certificate's renewal (kubelet-certificate mode) runs too.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include "base/metrics.h"
#include "kube/kubeconfig.h"
#include "net/timer.h"
#include "net/tls.h"

namespace yurthub::hub {

class KubeconfigReloader {
 public:
  KubeconfigReloader(std::string path, kube::Credentials loaded,
                     std::shared_ptr<net::ReplaceableContext> context,
                     std::shared_ptr<net::ReplaceableToken> token, base::MetricsRegistry& registry,
                     std::chrono::milliseconds period = std::chrono::seconds(10));
  ~KubeconfigReloader();

  // Runs `listener` on executor()'s thread after each change put in use. Before start().
  void on_change(std::function<void()> listener) { listeners_.push_back(std::move(listener)); }
  // Starts following the file on the reloader's own thread.
  void start();
  // The reloader's thread: the serving certificate's renewal runs there in kubelet-certificate
  // mode.
  boost::asio::any_io_executor executor() { return io_.get_executor(); }
  // The credentials in use. On executor()'s thread, or before start().
  const kube::Credentials& current() const { return current_; }

  // Reads the kubeconfig once; true when the certificate or the token changed and was put in use.
  // On executor()'s thread, or before start().
  bool reload_once();

 private:
  boost::asio::awaitable<void> follow();

  std::string path_;
  kube::Credentials current_;
  std::shared_ptr<net::ReplaceableContext> context_;
  std::shared_ptr<net::ReplaceableToken> token_;
  base::Gauge& expiry_;
  std::chrono::milliseconds period_;
  std::vector<std::function<void()>> listeners_;
  boost::asio::io_context io_;
  std::thread thread_;
};

// Sets `gauge` to the expiry (Unix seconds) of the certificate in `credentials`, if any.
void set_certificate_expiry(base::Gauge& gauge, const kube::Credentials& credentials);
// Sets `gauge` to `not_after` as Unix seconds (the expiry gauges of both certificates).
void set_expiry(base::Gauge& gauge, std::chrono::system_clock::time_point not_after);

// The gauge node_yurthub_client_certificate_expiry_timestamp_seconds.
base::Gauge& client_certificate_expiry_gauge(base::MetricsRegistry& registry);

}  // namespace yurthub::hub
