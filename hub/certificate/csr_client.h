// Getting a certificate signed through the Kubernetes API, as client-go's certificate manager
// does: create a CertificateSigningRequest for a fresh key, then read it back until it is issued,
// denied or the wait ends. Called by ClientCertificateManager at bootstrap and at each renewal.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "base/result.h"
#include "hub/options.h"
#include "net/tls.h"
#include "net/x509.h"

namespace yurthub::hub {

struct CertificateOrder {
  net::CertificateRequestSubject subject;
  std::string signer_name;
  std::vector<std::string> usages;
  std::chrono::milliseconds poll{std::chrono::seconds(1)};  // between reads of the CSR
  std::chrono::milliseconds wait{std::chrono::minutes(4)};  // YurtHub gives up after 4 minutes
  std::chrono::milliseconds call_timeout{std::chrono::seconds(10)};
};

struct IssuedCertificate {
  std::string certificate_pem;
  std::string key_pem;
  std::string csr_name;
};

// Makes a key and a CSR for `order`, creates it on `server` as `tls`'s identity, and waits for the
// certificate. Errors: the server refused the CSR (its Status message), the CSR was denied or
// failed (the condition's reason), the wait ended, three reads in a row got no answer (the cloud
// went away: Unavailable), the certificate is not for the key.
boost::asio::awaitable<Result<IssuedCertificate>> request_certificate(
    boost::asio::any_io_executor executor, const ServerAddress& server, const net::UpstreamTls& tls,
    const CertificateOrder& order);

}  // namespace yurthub::hub
