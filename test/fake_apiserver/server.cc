// HTTPS listener and connection loop; see server.h.
#include "test/fake_apiserver/server.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include <openssl/ssl.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include "base/log.h"
#include "test/fake_apiserver/cluster_info.h"
#include "test/fake_apiserver/seed.h"
#include "test/fake_apiserver/service_account_token.h"

namespace yurthub::fake {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;
constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

constexpr std::size_t kHeaderLimit = 1 << 20;        // Go's DefaultMaxHeaderBytes
constexpr std::size_t kBodyLimit = 3 * 1024 * 1024;  // kube-apiserver's MaxRequestBodyBytes
constexpr std::chrono::seconds kHandshakeTimeout{10};
constexpr std::chrono::seconds kIdleTimeout{90};
constexpr std::chrono::milliseconds kWatchGrace{200};
constexpr std::chrono::seconds kHardStop{3};

// ALPN: this server speaks HTTP/1.1 only; a client offering h2 first must not get it.
int select_alpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
                unsigned int inlen, void*) {
  static const unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  unsigned char* selected = nullptr;
  int r = SSL_select_next_proto(&selected, outlen, kHttp11, sizeof kHttp11, in, inlen);
  if (r != OPENSSL_NPN_NEGOTIATED) return SSL_TLSEXT_ERR_NOACK;
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

Server::Server(asio::io_context& ioc, Options options)
    : ioc_(ioc),
      options_(std::move(options)),
      ssl_ctx_(ssl::context::tls_server),
      acceptor_(ioc),
      store_(options_.history),
      api_(store_),
      grace_timer_(ioc) {}

Status Server::setup_tls() {
  boost::system::error_code ec;
  ssl_ctx_.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  ssl_ctx_.use_certificate_chain_file(options_.cert_file, ec);
  if (ec) return make_error("--cert=" + options_.cert_file + ": " + ec.message());
  ssl_ctx_.use_private_key_file(options_.key_file, ssl::context::pem, ec);
  if (ec) return make_error("--key=" + options_.key_file + ": " + ec.message());
  ssl_ctx_.load_verify_file(options_.client_ca_file, ec);
  if (ec) return make_error("--client-ca=" + options_.client_ca_file + ": " + ec.message());
  // Advertise the client CA so a client (Go's crypto/tls) picks a certificate it issued.
  STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(options_.client_ca_file.c_str());
  if (names != nullptr) SSL_CTX_set_client_CA_list(ssl_ctx_.native_handle(), names);
  // Request a certificate but accept clients without one (bearer-token clients).
  ssl_ctx_.set_verify_mode(ssl::verify_peer);
  SSL_CTX_set_alpn_select_cb(ssl_ctx_.native_handle(), select_alpn, nullptr);
  return {};
}

Status Server::load_service_account_key() {
  auto key = options_.service_account_key_file.empty()
                 ? ServiceAccountKey::generate()
                 : ServiceAccountKey::load(options_.service_account_key_file);
  if (!key) return key.error();
  service_account_key_ = std::make_unique<ServiceAccountKey>(std::move(*key));
  api_.set_service_account_key(service_account_key_.get());
  std::set<std::string> groups(options_.issuer_discovery_groups.begin(),
                               options_.issuer_discovery_groups.end());
  issuer_discovery_ = std::make_unique<IssuerDiscovery>(*service_account_key_,
                                                        kServiceAccountIssuer, std::move(groups));
  YH_LOG(Info) << "service-account tokens signed with kid " << service_account_key_->kid();
  return {};
}

Status Server::load_data() {
  Status s = load_service_account_key();
  if (!s.ok()) return s;
  if (!options_.token_file.empty()) {
    auto tokens = TokenAuthenticator::load(options_.token_file);
    if (!tokens) return tokens.error();
    tokens_ = std::make_unique<TokenAuthenticator>(std::move(*tokens));
  }
  // The controllers observe the store from the start, so seeded CSRs and tokens are handled too.
  ControllerOptions co;
  co.csr_auto_approve = options_.csr_auto_approve;
  if (!options_.csr_signing_cert.empty()) {
    auto signer = CsrSigner::load(options_.csr_signing_cert, options_.csr_signing_key,
                                  options_.csr_cert_lifetime);
    if (!signer) return signer.error();
    co.signer = std::move(*signer);
  }
  controllers_ = std::make_unique<Controllers>(store_, std::move(co));
  for (const auto& seed : options_.seeds) {
    auto n = load_seed_file(api_, seed);
    if (!n) return n.error();
    YH_LOG(Info) << "loaded " << *n << " objects from " << seed;
  }
  if (options_.generate_pods > 0) {
    auto n = generate_pods(api_, options_.generate_pods, options_.generate_pod_bytes,
                           options_.generate_node);
    if (!n) return n.error();
    YH_LOG(Info) << "generated " << *n << " pods in namespace bulk";
  }
  return {};
}

Status Server::start() {
  Status s = setup_tls();
  if (!s.ok()) return s;
  s = load_data();
  if (!s.ok()) return s;
  boost::system::error_code ec;
  auto address = asio::ip::make_address(options_.bind, ec);
  if (ec) return make_error("--bind=" + options_.bind + ": " + ec.message());
  tcp::endpoint endpoint(address, options_.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return make_error("listen on " + options_.bind + ":" + std::to_string(options_.port) + ": " +
                      ec.message());
  port_ = acceptor_.local_endpoint().port();
  s = create_cluster_info();
  if (!s.ok()) return s;
  RouterConfig config;
  config.watch.bookmark_interval = options_.bookmark_interval;
  config.watch.watch_list = options_.watch_list;
  config.watch.max_queue = options_.watch_queue;
  config.deny_users.insert(options_.deny_users.begin(), options_.deny_users.end());
  config.server_address = options_.bind + ":" + std::to_string(port_);
  config.service_account_key = service_account_key_.get();
  config.issuer_discovery = issuer_discovery_.get();
  router_ = std::make_unique<Router>(store_, api_, tokens_.get(), std::move(config));
  asio::co_spawn(ioc_, accept_loop(), asio::detached);
  return {};
}

Status Server::create_cluster_info() {
  if (options_.cluster_info_server.empty()) return {};
  std::string server = options_.cluster_info_server;
  if (server == "self") {
    std::string host =
        options_.bind.find(':') != std::string::npos ? "[" + options_.bind + "]" : options_.bind;
    server = "https://" + host + ":" + std::to_string(port_);
  }
  std::ifstream in(options_.client_ca_file);
  std::stringstream ca;
  ca << in.rdbuf();
  if (!in) return make_error("--client-ca=" + options_.client_ca_file + ": cannot read");
  Status s = ensure_cluster_info(api_, store_, server, ca.str());
  if (s.ok()) YH_LOG(Info) << "kube-public/cluster-info names " << server;
  return s;
}

asio::awaitable<void> Server::accept_loop() {
  for (;;) {
    auto [ec, socket] = co_await acceptor_.async_accept(kNoThrow);
    if (!acceptor_.is_open() || shutting_down_) co_return;
    if (ec) {
      YH_LOG(Warning) << "accept: " << ec.message();
      continue;
    }
    asio::co_spawn(ioc_, session(std::move(socket)), asio::detached);
  }
}

asio::awaitable<void> Server::session(tcp::socket socket) {
  connections_.emplace_back();
  auto conn = std::prev(connections_.end());
  struct Unregister {
    Server* server;
    std::list<std::function<void()>>::iterator it;
    ~Unregister() {
      server->connections_.erase(it);
      if (server->shutting_down_ && server->connections_.empty()) server->grace_timer_.cancel();
    }
  } unregister{this, conn};
  TlsStream stream(std::move(socket), ssl_ctx_);
  *conn = [&stream] { boost::beast::get_lowest_layer(stream).close(); };
  boost::beast::get_lowest_layer(stream).expires_after(kHandshakeTimeout);
  auto [hs_ec] = co_await stream.async_handshake(ssl::stream_base::server, kNoThrow);
  if (hs_ec) co_return;
  boost::beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(kBodyLimit);
    boost::beast::get_lowest_layer(stream).expires_after(kIdleTimeout);
    auto [ec, n] = co_await http::async_read(stream, buffer, parser, kNoThrow);
    (void)n;
    if (ec == http::error::header_limit || ec == http::error::body_limit) {
      Reply reply = ec == http::error::body_limit ? entity_too_large()
                                                  : Reply{431, "text/plain; charset=utf-8",
                                                          "431 Request Header Fields Too Large"};
      YH_LOG(Info) << "request rejected: " << ec.message() << " " << reply.status;
      ErrorCode wec = co_await write_reply(stream, reply, false);
      (void)wec;
      break;
    }
    if (ec) break;  // end_of_stream, idle timeout, reset, shutdown
    http::request<http::string_body> req = parser.release();
    // Per request, as kube-apiserver: the certificate may have expired since the handshake.
    const Identity cert = identity_from_certificate(stream.native_handle());
    auto served = router_->serve(stream, req, cert, *conn);
    Next next = co_await std::move(served);
    if (next == Next::HandedOff) co_return;
    if (next == Next::Close || shutting_down_) break;
  }
  boost::beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(2));
  auto [sd_ec] = co_await stream.async_shutdown(kNoThrow);
  (void)sd_ec;
}

void Server::shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  boost::system::error_code ec;
  acceptor_.close(ec);
  // Watches first, so their streams end with a terminating chunk; then everything else.
  store_.close_all_watchers();
  if (connections_.empty()) return;
  grace_timer_.expires_after(kWatchGrace);
  grace_timer_.async_wait([this](boost::system::error_code) {
    close_connections();
    if (connections_.empty()) return;
    grace_timer_.expires_after(kHardStop);
    grace_timer_.async_wait([this](boost::system::error_code wait_ec) {
      if (wait_ec) return;  // cancelled: the last connection ended
      YH_LOG(Warning) << connections_.size() << " connections did not end; stopping";
      ioc_.stop();
    });
  });
}

void Server::close_connections() {
  for (auto& close : connections_) {
    if (close) close();
  }
}

}  // namespace yurthub::fake
