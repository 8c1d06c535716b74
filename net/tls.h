// TLS contexts for both sides of the hub: towards the apiservers (verify the cluster CA; present
// the hub's client certificate, or none for requests that carry their own bearer token) and for
// the HTTPS proxy port. Built once at startup by Hub from the kubeconfig credentials; contexts are
// shared, read-only, by all workers (OpenSSL's SSL_CTX is safe for concurrent SSL_new).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <openssl/ssl.h>
#include <boost/asio/ssl/context.hpp>

#include "base/result.h"
#include "kube/kubeconfig.h"

namespace yurthub::net {

// A value every worker reads and one writer replaces whole: readers hold the shared_ptr they got,
// so a replace() never changes what an open exchange is using. A mutex, not
// std::atomic<std::shared_ptr>: libstdc++ 12's load() releases its lock bit with a relaxed store,
// which ThreadSanitizer reports as a race with the next store (test/hub/certificate/threads_test).
// Uncontended, it costs a worker about as much as the atomic's lock bit.
template <class T>
class Replaceable {
 public:
  explicit Replaceable(std::shared_ptr<T> value) : current_(std::move(value)) {}
  std::shared_ptr<T> get() const {
    std::lock_guard lock(mutex_);
    return current_;
  }
  // The old value is released after the lock, by `value` going out of scope.
  void replace(std::shared_ptr<T> value) {
    std::lock_guard lock(mutex_);
    current_.swap(value);
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<T> current_;
};

// The context presenting the hub's client certificate, replaced whole when the certificate is
// renewed (hub/certificate): connections dialled after a replace() present the new certificate,
// connections already open (an open watch) keep theirs, as each SSL holds its own SSL_CTX
// reference. Read by every worker when it dials; replaced by the certificate manager.
using ReplaceableContext = Replaceable<boost::asio::ssl::context>;

// The hub's bearer token from its kubeconfig (`token`, or the contents of `tokenFile`), replaced
// when hub/certificate/kubeconfig_reloader sees the file change, as client-go re-reads tokenFile.
using ReplaceableToken = Replaceable<const std::string>;

struct UpstreamTls {
  // Presents the hub's client certificate (when the kubeconfig has one).
  std::shared_ptr<ReplaceableContext> hub_identity;
  // Presents no client certificate: requests carrying `Authorization: Bearer` use it, so the
  // apiserver authenticates the caller, not the hub.
  std::shared_ptr<boost::asio::ssl::context> anonymous;
  // The hub's own bearer token, when its kubeconfig has a token instead of a certificate; added to
  // requests that carry no Authorization header. Null or empty: none.
  std::shared_ptr<ReplaceableToken> hub_token;
  std::string server_name_override;  // kubeconfig tls-server-name
  bool verify_peer = true;           // false only with insecure-skip-tls-verify

  // "Bearer <hub token>" for an Authorization header, or "" when the hub has no token.
  std::string hub_authorization() const;
};

Result<UpstreamTls> make_upstream_tls(const kube::Credentials& credentials);

// A client context presenting `credentials`' certificate (if any), verifying the cluster CA; for
// ReplaceableContext::replace().
Result<std::shared_ptr<boost::asio::ssl::context>> make_client_context(
    const kube::Credentials& credentials);

// 128 bits from OpenSSL's random generator, as 32 hex digits: a per-process secret. An error
// when the generator fails (then no secret can be made).
Result<std::string> random_token();

// Compares two secrets in a time that does not depend on where they first differ.
bool secrets_equal(std::string_view a, std::string_view b);

// The HTTPS proxy listener's context: certificate chain and key from PEM files, TLS >= 1.2,
// HTTP/1.1 only (no ALPN h2, like YurtHub's listeners).
Result<std::shared_ptr<boost::asio::ssl::context>> make_server_tls(const std::string& cert_file,
                                                                   const std::string& key_file);
// The same from PEM text (a serving certificate the hub obtained by CSR).
Result<std::shared_ptr<boost::asio::ssl::context>> make_server_tls_from_pem(
    const std::string& cert_pem, const std::string& key_pem);

// Whether `host` is an IP address rather than a DNS name.
bool is_ip_literal(const std::string& host);

// Prepares a client connection to the server named `name` (host or IP): SNI for a DNS name (never
// for an IP, RFC 6066) and, with `verify_peer`, the name the handshake must find in the server's
// subjectAltName, never in its subject's CN (a client certificate named like a host must not pass
// as the server; Asio's host_name_verification would fall back to the CN), as Go's crypto/tls.
Status name_server(SSL* ssl, const std::string& name, bool verify_peer);

// Client certificates on a server connection: the trust anchors are `ca_pem` (the cluster CA).
// A shared X509_STORE, for require_client_certificate on each accepted connection.
Result<std::shared_ptr<X509_STORE>> make_client_ca_store(const std::string& ca_pem);
// Makes the handshake of a server connection fail unless the client presents a certificate that
// chains to `store` (set on the connection only: the context stays shared with other ports).
void require_client_certificate(SSL* ssl, const std::shared_ptr<X509_STORE>& store);
// After such a handshake: the verified client certificate's subject CN and O values.
struct PeerCertificate {
  std::string common_name;
  std::vector<std::string> organizations;
};
std::optional<PeerCertificate> verified_peer(SSL* ssl);

}  // namespace yurthub::net
