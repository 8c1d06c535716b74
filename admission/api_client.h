// pool-admission's client of the real kube-apiserver, over HTTPS with the identity of its
// --kubeconfig (client certificate or bearer token), or, without one, of the pod's service
// account as client-go's rest.InClusterConfig finds it (KUBERNETES_SERVICE_HOST/PORT, the token
// and CA under /var/run/secrets/kubernetes.io/serviceaccount). The projected token is re-read
// before every request, as kubelet rotates it. Used by admission/collection.cc (lists and
// watches) and admission/node_labeller.cc (discovery, node patches). The hub's own api_call lives
// in hub/ and dials through its upstream pool; this one needs neither.
// Threading: connect() and call() run on the executor given; the client itself is immutable.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/verb.hpp>

#include "base/result.h"
#include "net/streams.h"
#include "net/tls.h"

namespace yurthub::admission {

inline constexpr std::size_t kMaxApiAnswerBytes = 64u << 20;  // a list of every node

// One open TLS connection to the apiserver, for a caller that reads the answer itself (a watch).
struct ApiConnection {
  ApiConnection(const boost::asio::any_io_executor& executor, boost::asio::ssl::context& context)
      : stream(executor, context) {}
  net::TlsStream stream;
  boost::beast::flat_buffer buffer;
};

struct ApiAnswer {
  unsigned status = 0;
  std::string body;
};

class ApiClient {
 public:
  // From the kubeconfig at `path` (kube/kubeconfig.h: its current context).
  static Result<std::shared_ptr<const ApiClient>> from_kubeconfig(const std::string& path);
  // As in a pod: `service_host`/`service_port` (KUBERNETES_SERVICE_HOST/PORT), the CA and the
  // token file in `account_dir`.
  static Result<std::shared_ptr<const ApiClient>> in_cluster(const std::string& service_host,
                                                             const std::string& service_port,
                                                             const std::string& account_dir);

  const std::string& server_url() const { return url_; }

  // Dials the apiserver and completes the TLS handshake (verifying its certificate against the
  // cluster CA and the server's name or tls-server-name, the subjectAltName only), within
  // `timeout`.
  boost::asio::awaitable<Result<std::unique_ptr<ApiConnection>>> connect(
      boost::asio::any_io_executor executor, std::chrono::milliseconds timeout) const;

  // Writes a request with this client's credentials on `connection` (body sent when not empty).
  boost::asio::awaitable<Status> send(ApiConnection& connection, boost::beast::http::verb method,
                                      const std::string& target, std::string body,
                                      const std::string& content_type) const;

  // One request on its own connection, the whole answer read (at most kMaxApiAnswerBytes), all
  // within `timeout`. An error when no answer was read; any HTTP status is an answer.
  boost::asio::awaitable<Result<ApiAnswer>> call(boost::asio::any_io_executor executor,
                                                 boost::beast::http::verb method,
                                                 const std::string& target, std::string body,
                                                 const std::string& content_type,
                                                 std::chrono::milliseconds timeout) const;

 private:
  ApiClient() = default;
  static Result<std::shared_ptr<const ApiClient>> make(const std::string& server,
                                                       const kube::Credentials& credentials,
                                                       std::string token_file);
  std::string authorization() const;  // "Bearer <token>", or "" with a client certificate

  std::string url_;  // https://host:port
  std::string host_;
  std::string port_;
  net::UpstreamTls tls_;
  std::string token_;       // from the kubeconfig
  std::string token_file_;  // in-cluster: re-read for every request
};

}  // namespace yurthub::admission
