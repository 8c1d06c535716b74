// Client connections on the proxy listeners; see proxy_session.h.
// The member templates are in hub/proxy_session_impl.h; instantiated here.
#include "hub/proxy_session_impl.h"

namespace yurthub::hub {
namespace asio = boost::asio;
namespace beast = boost::beast;

namespace {

asio::awaitable<void> plain_session(net::TcpSocket socket, Worker& worker,
                                    const char* listener_name, bool bearer_required) {
  auto slot = admit_connection(socket, worker, true);
  if (!slot) co_return;
  boost::system::error_code ignored;
  socket.set_option(asio::ip::tcp::no_delay(true), ignored);
  auto client = std::make_shared<ClientConnection<net::PlainStream>>(worker.io().get_executor(),
                                                                     std::move(socket));
  auto session = std::make_shared<ProxySession<net::PlainStream>>(
      std::move(client), worker, listener_name, bearer_required, slot->peer());
  co_await ProxySession<net::PlainStream>::run(std::move(session));
}

}  // namespace

asio::awaitable<void> start_plain_session(net::TcpSocket socket, Worker& worker) {
  return plain_session(std::move(socket), worker, "proxy", false);
}

asio::awaitable<void> start_dummy_ip_session(net::TcpSocket socket, Worker& worker) {
  return plain_session(std::move(socket), worker, "proxy_dummy", true);
}

asio::awaitable<void> start_tls_session(net::TcpSocket socket, Worker& worker,
                                        std::shared_ptr<asio::ssl::context> tls,
                                        std::shared_ptr<X509_STORE> follower_ca) {
  if (!tls) co_return;  // no serving certificate issued yet: the connection is closed
  auto slot = admit_connection(socket, worker, false);
  if (!slot) co_return;
  boost::system::error_code ignored;
  socket.set_option(asio::ip::tcp::no_delay(true), ignored);
  auto client = std::make_shared<ClientConnection<net::TlsStream>>(worker.io().get_executor(),
                                                                   std::move(socket), *tls);
  const bool multiplexer = follower_ca != nullptr;
  if (multiplexer) net::require_client_certificate(client->stream.native_handle(), follower_ca);
  auto session = std::make_shared<ProxySession<net::TlsStream>>(
      std::move(client), worker, multiplexer ? "multiplexer" : "proxy_secure", true, slot->peer());
  if (multiplexer) session->serve_followers();
  co_await ProxySession<net::TlsStream>::run(std::move(session));
}

template class ProxySession<net::PlainStream>;
template class ProxySession<net::TlsStream>;

}  // namespace yurthub::hub
