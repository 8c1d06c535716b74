// The re-read serving certificate; see serving_cert.h.
#include "admission/serving_cert.h"

#include "base/log.h"
#include "net/files.h"
#include "net/tls.h"

namespace yurthub::admission {
Result<std::unique_ptr<ServingCertificate>> ServingCertificate::load(
    std::string cert_file, std::string key_file, base::Clock::duration check_interval) {
  std::unique_ptr<ServingCertificate> cert(
      new ServingCertificate(std::move(cert_file), std::move(key_file), check_interval));
  if (Status loaded = cert->reload(); !loaded) return loaded.error();
  return cert;
}

Status ServingCertificate::reload() {
  last_check_ = base::Clock::now();
  auto cert = net::read_config_file(cert_file_);
  if (!cert) return make_error("--tls-cert-file: " + cert.error().message);
  auto key = net::read_config_file(key_file_);
  if (!key) return make_error("--tls-private-key-file: " + key.error().message);
  if (context_ && *cert == cert_pem_ && *key == key_pem_) return Status{};
  auto context = net::make_server_tls_from_pem(*cert, *key);
  if (!context) {
    return make_error(cert_file_ + " and " + key_file_ + ": " + context.error().message);
  }
  if (context_) YH_LOG(Info) << "serving certificate " << cert_file_ << " changed: reloaded";
  context_ = std::move(*context);
  cert_pem_ = std::move(*cert);
  key_pem_ = std::move(*key);
  last_problem_.clear();
  return Status{};
}

std::shared_ptr<boost::asio::ssl::context> ServingCertificate::current() {
  if (base::Clock::now() - last_check_ >= check_interval_) {
    if (Status reloaded = reload(); !reloaded && reloaded.error().message != last_problem_) {
      last_problem_ = reloaded.error().message;
      YH_LOG(Warning) << "serving certificate not reloaded, the last one stays: " << last_problem_;
    }
  }
  return context_;
}

}  // namespace yurthub::admission
