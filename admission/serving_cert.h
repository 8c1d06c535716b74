// The webhook's serving certificate, from --tls-cert-file and --tls-private-key-file, re-read when
// the files change: a Secret mounted into the pod is replaced in place when cert-manager (or an
// operator) renews it, and kube-apiserver must meet the new certificate without a restart.
// current() looks at the files at most once per `check_interval` (on base::Clock, so tests move
// time instead of sleeping); connections accepted after a change get the new context, those open
// keep theirs. A pair that does not load (the certificate written before its key) is ignored, the
// last good context kept and the problem logged until the pair loads.
// Owned by admission/webhook_server.cc's listener; not thread-safe (its one thread calls it).
#pragma once

#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "base/clock.h"
#include "base/result.h"

namespace yurthub::admission {

class ServingCertificate {
 public:
  // Loads the pair now: an error (naming the file) when it does not load.
  static Result<std::unique_ptr<ServingCertificate>> load(
      std::string cert_file, std::string key_file,
      base::Clock::duration check_interval = std::chrono::seconds(10));

  // The context for the next handshake.
  std::shared_ptr<boost::asio::ssl::context> current();

 private:
  ServingCertificate(std::string cert_file, std::string key_file,
                     base::Clock::duration check_interval)
      : cert_file_(std::move(cert_file)),
        key_file_(std::move(key_file)),
        check_interval_(check_interval) {}
  // Reads both files; replaces the context when their contents changed and load.
  Status reload();

  std::string cert_file_;
  std::string key_file_;
  base::Clock::duration check_interval_;
  base::Clock::time_point last_check_{};
  std::string cert_pem_;  // what the current context was made of
  std::string key_pem_;
  std::string last_problem_;  // logged once per distinct problem
  std::shared_ptr<boost::asio::ssl::context> context_;
};

}  // namespace yurthub::admission
