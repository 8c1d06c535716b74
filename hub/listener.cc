// TCP listeners; see listener.h.
#include "hub/listener.h"

#include <unistd.h>

#include <boost/asio/co_spawn.hpp>

#include "base/log.h"
#include "net/http_io.h"
#include "net/spawn.h"
#include "net/timer.h"

namespace yurthub::hub {
namespace asio = boost::asio;
using asio::ip::tcp;

Result<std::unique_ptr<Listener>> Listener::bind(asio::io_context& io, const std::string& address,
                                                 int port, std::string name,
                                                 net::InheritedListeners* inherited) {
  boost::system::error_code ec;
  auto ip = asio::ip::make_address(address, ec);
  if (ec) return make_error(name + ": bad bind address \"" + address + "\"");
  tcp::endpoint endpoint(ip, static_cast<unsigned short>(port));
  tcp::acceptor acceptor(io);
  if (auto fd = inherited ? inherited->take(endpoint) : std::nullopt) {
    acceptor.assign(endpoint.protocol(), *fd, ec);
    if (ec) {
      ::close(*fd);
      return make_error(name + ": cannot take the socket systemd bound to " + address + ":" +
                        std::to_string(port) + ": " + ec.message());
    }
    return std::unique_ptr<Listener>(new Listener(std::move(acceptor), std::move(name), true));
  }
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return make_error(name + ": cannot listen on " + address + ":" + std::to_string(port) + ": " +
                      ec.message());
  }
  return std::unique_ptr<Listener>(new Listener(std::move(acceptor), std::move(name), false));
}

tcp::endpoint Listener::local_endpoint() const {
  boost::system::error_code ec;
  return acceptor_.local_endpoint(ec);
}

void Listener::start(std::vector<Worker*> workers, AcceptHandler on_accept) {
  workers_ = std::move(workers);
  on_accept_ = std::move(on_accept);
  net::spawn_detached(acceptor_.get_executor(), accept_loop(), "accept loop");
}

void Listener::close() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

asio::awaitable<void> Listener::accept_loop() {
  std::size_t next = 0;
  net::Timer backoff(acceptor_.get_executor());
  while (acceptor_.is_open()) {
    Worker& worker = *workers_[next++ % workers_.size()];
    // The socket is created on the chosen worker's io_context, so it runs there.
    auto [ec, socket] = co_await acceptor_.async_accept(worker.io(), net::kNoThrow);
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) break;
    if (ec) {
      // Out of file descriptors and similar: back off instead of spinning.
      YH_LOG(Warning) << name_ << ": accept failed: " << ec.message();
      backoff.expires_after(std::chrono::milliseconds(100));
      co_await backoff.async_wait(net::kNoThrow);
      continue;
    }
    net::spawn_detached(worker.io(), on_accept_(std::move(socket), worker), "client session");
  }
}

}  // namespace yurthub::hub
