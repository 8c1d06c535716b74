// ProxySession: one client connection on a proxy listener. Reads requests one after another
// (keep-alive; pipelined bytes wait in the buffer), enforces the header and body limits, the idle
// timeout and --max-requests-in-flight, classifies each request and hands it to the Forwarder,
// then counts it in the metrics. Registered with its worker so streams can be ended from outside.
// Created by the Listener on the worker thread that will run it.
#pragma once

#include <memory>
#include <optional>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "hub/client_connection.h"
#include "hub/forwarder.h"
#include "hub/worker.h"

namespace yurthub::hub {

template <class Stream>
class ProxySession : public SessionControl {
 public:
  // `bearer_required`: requests without a bearer token get 401 (always so on the HTTPS port).
  // `peer`: who connected, as ConnectionLimits::peer_of names it.
  ProxySession(std::shared_ptr<ClientConnection<Stream>> client, Worker& worker,
               const char* listener_name, bool bearer_required = false,
               const std::string& peer = "");
  ~ProxySession() override;

  // Serves the connection until it closes. Takes ownership of the session.
  static boost::asio::awaitable<void> run(std::shared_ptr<ProxySession> self);

  // Makes this a session of the multiplexer port (hub/proxy_session_followers_impl.h): its client
  // is a follower hub, known by its client certificate. Before run().
  void serve_followers() { follower_port_ = true; }

  void on_server_health(std::size_t server, bool healthy) override;
  void on_drain() override;
  void on_filters_changed() override;

 private:
  boost::asio::awaitable<void> serve_connection();
  // Classifies the request into info_; false if its target names no path.
  bool classify(RequestParser& parser);
  boost::asio::awaitable<bool> serve(RequestParser& parser);
  boost::asio::awaitable<void> reject_unreadable(const boost::system::error_code& ec);
  boost::asio::awaitable<bool> answer_error(kube::Failure failure, const std::string& detail,
                                            const kube::RequestInfo& info, RequestParser& parser,
                                            std::optional<int> retry_after = {},
                                            RequestSeries::Kind* kind = nullptr);
  // The multiplexer port (hub/proxy_session_followers_impl.h): after the handshake, the follower's
  // node from its verified certificate (false: not a node's, the connection is closed); then
  // each request: the pool's health, or a pool-scope list or watch; anything else is refused.
  bool identify_follower();
  boost::asio::awaitable<bool> serve_follower(RequestParser& parser);
  // Counts the answered request; `kind` as RequestSeries::count() takes it.
  void record(const kube::RequestInfo& info, const ForwardResult& result,
              std::chrono::steady_clock::time_point started, RequestSeries::Kind* kind = nullptr);

  std::shared_ptr<ClientConnection<Stream>> client_;
  Worker& worker_;
  SharedState& shared_;
  const char* listener_name_;
  bool bearer_required_;
  bool privileged_peer_;  // ConnectionLimits::is_privileged
  bool idle_ = true;      // waiting for the next request's header
  SessionRegistration registration_;
  // The request being served, its Expect: 100-continue and its forwarder. Members rather than
  // locals of serve(): a coroutine frame of more than 1020 bytes is not recycled by Asio and costs
  // a malloc and a free per request (docs/benchmarks.md); one request is served at a time.
  std::optional<kube::RequestInfo> info_;
  bool expects_continue_ = false;
  std::optional<Forwarder<Stream>> forwarder_;
  bool follower_port_ = false;
  std::string follower_node_;  // the multiplexer port's client, from its certificate
};

// Starts a session for an accepted socket; runs on `worker`'s thread.
boost::asio::awaitable<void> start_plain_session(net::TcpSocket socket, Worker& worker);
// A plain-HTTP session on the dummy interface's address (listener "proxy_dummy"), which every pod
// of the node reaches: as on the HTTPS port, a request without a bearer token gets 401 instead of
// the node's identity (YurtHub lends it there too).
boost::asio::awaitable<void> start_dummy_ip_session(net::TcpSocket socket, Worker& worker);
// A session of a TLS port; `tls` null (no serving certificate issued yet): the connection is
// closed at once. `follower_ca` null: the HTTPS port (10268, listener "proxy_secure"). Otherwise
// the multiplexer port (--multiplexer-port, listener "multiplexer"): the handshake requires a
// client certificate that chains to `follower_ca`, and only follower hubs of this hub's pool are
// served (hub/proxy_session_followers_impl.h).
boost::asio::awaitable<void> start_tls_session(net::TcpSocket socket, Worker& worker,
                                               std::shared_ptr<boost::asio::ssl::context> tls,
                                               std::shared_ptr<X509_STORE> follower_ca = nullptr);

extern template class ProxySession<net::PlainStream>;
extern template class ProxySession<net::TlsStream>;

}  // namespace yurthub::hub
