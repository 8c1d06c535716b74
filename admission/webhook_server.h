// The webhook's HTTPS listener: kube-apiserver POSTs AdmissionReviews to /mutate-pods and
// /validate-nodes (admission/webhook.h answers them); GET /healthz answers "ok" for the
// Deployment's probes. One coroutine per connection with keep-alive (kube-apiserver reuses its
// connections), in the manner of Beast's async server example, and bounds everywhere:
//   - at most kMaxConnections open connections (more are closed at once);
//   - the TLS handshake within kHandshakeTimeout, an idle connection closed after kIdleTimeout,
//     a request's body read and answered within kRequestTimeout (kube-apiserver gives a webhook
//     at most 30 s);
//   - headers up to kMaxHeaderBytes (431), bodies up to kMaxBodyBytes (413), malformed HTTP (400),
//     another method (405), another Content-Type than JSON (415): each a Kubernetes Status.
// Runs on one io_context thread (cmd/pool_admission.cc); start() and stop() on that thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "admission/serving_cert.h"
#include "admission/webhook.h"
#include "base/result.h"
#include "net/tcp_socket.h"

namespace yurthub::admission {

inline constexpr std::size_t kMaxConnections = 512;
inline constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
inline constexpr auto kIdleTimeout = std::chrono::seconds(90);
inline constexpr auto kRequestTimeout = std::chrono::seconds(30);
inline constexpr std::size_t kMaxHeaderBytes = 64 * 1024;
// An UPDATE's review holds the object twice; an object is at most 1.5 MiB in etcd, and
// kube-apiserver's own request limit is 3 MiB.
inline constexpr std::size_t kMaxBodyBytes = 8u << 20;

class WebhookServer {
 public:
  // Binds `address`:`port` (port 0: any free port) and listens.
  static Result<std::unique_ptr<WebhookServer>> listen(boost::asio::io_context& io,
                                                       const std::string& address,
                                                       unsigned short port,
                                                       std::unique_ptr<ServingCertificate> cert,
                                                       WebhookConfig config);
  ~WebhookServer();

  boost::asio::ip::tcp::endpoint local_endpoint() const;
  void start();
  void stop();  // closes the listener; open connections end at their next timeout

 private:
  class Connection;
  WebhookServer(boost::asio::io_context& io, boost::asio::ip::tcp::acceptor acceptor,
                std::unique_ptr<ServingCertificate> cert, WebhookConfig config);
  boost::asio::awaitable<void> accept_loop();

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::unique_ptr<ServingCertificate> cert_;
  // Shared with each connection's coroutine, which may outlive the server by a timeout.
  std::shared_ptr<const WebhookConfig> config_;
  std::shared_ptr<std::size_t> open_connections_ = std::make_shared<std::size_t>(0);
};

}  // namespace yurthub::admission
