// Listener: a bound TCP acceptor that hands each accepted connection to the next worker
// (round-robin) by calling `on_accept(socket, worker)` on that worker's thread. Used by Hub for the
// proxy ports (10261 plain, 10268 TLS) and the admin port (10267), bound by the hub or handed over
// by systemd's socket activation. The accept loop runs on the executor the acceptor was created
// with.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "base/result.h"
#include "hub/worker.h"
#include "net/socket_activation.h"
#include "net/tcp_socket.h"

namespace yurthub::hub {

class Listener {
 public:
  using AcceptHandler = std::function<boost::asio::awaitable<void>(net::TcpSocket, Worker&)>;

  // Binds `address:port` (port 0 picks a free port), or takes the socket systemd bound to it
  // (`inherited`, net/socket_activation.h). `name` appears in logs.
  static Result<std::unique_ptr<Listener>> bind(boost::asio::io_context& io,
                                                const std::string& address, int port,
                                                std::string name,
                                                net::InheritedListeners* inherited = nullptr);
  // Whether the socket came from systemd.
  bool inherited() const { return inherited_; }

  boost::asio::ip::tcp::endpoint local_endpoint() const;
  const std::string& name() const { return name_; }
  void start(std::vector<Worker*> workers, AcceptHandler on_accept);
  void close();

 private:
  Listener(boost::asio::ip::tcp::acceptor acceptor, std::string name, bool inherited)
      : acceptor_(std::move(acceptor)), name_(std::move(name)), inherited_(inherited) {}
  boost::asio::awaitable<void> accept_loop();

  boost::asio::ip::tcp::acceptor acceptor_;
  std::string name_;
  bool inherited_ = false;
  std::vector<Worker*> workers_;
  AcceptHandler on_accept_;
};

}  // namespace yurthub::hub
