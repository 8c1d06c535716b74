// The fake kube-apiserver's HTTPS listener: TLS (a client certificate is requested, not
// required), one coroutine per connection reading HTTP/1.1 requests with kube-apiserver's limits
// (1 MiB of headers → 431, 3 MiB of body → 413, idle connections closed after 90 s), each handed
// to the Router. shutdown() stops accepting, ends every watch with its terminating chunk, then
// closes the remaining connections so the io_context runs dry. Single-threaded io_context.
#pragma once

#include <chrono>
#include <functional>
#include <list>
#include <memory>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/result.h"
#include "test/fake_apiserver/api_handlers.h"
#include "test/fake_apiserver/auth.h"
#include "test/fake_apiserver/controllers.h"
#include "test/fake_apiserver/issuer_discovery.h"
#include "test/fake_apiserver/options.h"
#include "test/fake_apiserver/router.h"
#include "test/fake_apiserver/store.h"

namespace yurthub::fake {

class Server {
 public:
  Server(boost::asio::io_context& ioc, Options options);

  // Loads TLS material, tokens and seed data, then binds and listens. Errors name the file or
  // address.
  Status start();
  // The bound port (after start()).
  unsigned short port() const { return port_; }
  // Stops accepting, ends watches cleanly, then closes every connection.
  void shutdown();
  std::size_t connection_count() const { return connections_.size(); }

 private:
  Status setup_tls();
  Status load_data();
  // --service-account-key-file, else a generated key; and the issuer discovery documents.
  Status load_service_account_key();
  // kube-public/cluster-info for --cluster-info-server (after bind: "self" needs the port).
  Status create_cluster_info();
  boost::asio::awaitable<void> accept_loop();
  boost::asio::awaitable<void> session(boost::asio::ip::tcp::socket socket);
  void close_connections();

  boost::asio::io_context& ioc_;
  Options options_;
  boost::asio::ssl::context ssl_ctx_;
  boost::asio::ip::tcp::acceptor acceptor_;
  Store store_;
  ApiHandlers api_;
  std::unique_ptr<TokenAuthenticator> tokens_;
  std::unique_ptr<Controllers> controllers_;
  // Signs TokenRequest tokens (read by api_ and router_, which it outlives) and is published by
  // issuer_discovery_.
  std::unique_ptr<ServiceAccountKey> service_account_key_;
  std::unique_ptr<IssuerDiscovery> issuer_discovery_;
  std::unique_ptr<Router> router_;
  unsigned short port_ = 0;
  // One closer per live connection; each aborts that connection's socket.
  std::list<std::function<void()>> connections_;
  boost::asio::steady_timer grace_timer_;
  bool shutting_down_ = false;
};

}  // namespace yurthub::fake
