// The webhook's HTTPS listener; see webhook_server.h.
#include "admission/webhook_server.h"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "base/log.h"
#include "kube/status.h"
#include "net/http_io.h"
#include "net/spawn.h"
#include "net/streams.h"

namespace yurthub::admission {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// Counts a connection open for as long as it lives, however its coroutine ends.
struct OpenConnection {
  std::shared_ptr<std::size_t> count;
  ~OpenConnection() { --*count; }
};

struct Reply {
  unsigned status = 0;
  std::string content_type;
  std::string body;
};

Reply status_reply(unsigned code, const std::string& reason, std::string message) {
  return {code, "application/json",
          kube::status_body(kube::ApiError{code, reason, std::move(message)})};
}

Reply failure_reply(kube::Failure failure, std::string_view detail) {
  const kube::ApiError error = kube::api_error(failure, detail);
  return {error.code, "application/json", kube::status_body(error)};
}

Reply route(const http::request<http::string_body>& req, const WebhookConfig& config) {
  const std::string_view target = req.target();
  const std::string_view path = target.substr(0, target.find('?'));
  if (path == "/healthz" && req.method() == http::verb::get) {
    return {200, "text/plain; charset=utf-8", "ok"};
  }
  if (path != kMutatePodsPath && path != kValidateNodesPath) {
    const WebhookAnswer answer = answer_review(path, "", config);  // the 404 Status
    return {answer.status, "application/json", answer.body};
  }
  if (req.method() != http::verb::post) {
    return status_reply(405, "MethodNotAllowed",
                        std::string(req.method_string()) + " " + std::string(path) +
                            ": an AdmissionReview is POSTed");
  }
  const std::string_view content_type = req[http::field::content_type];
  if (!net::istarts_with(content_type, "application/json")) {
    return failure_reply(kube::Failure::UnsupportedMediaType,
                         "Content-Type \"" + std::string(content_type) +
                             "\": an AdmissionReview is application/json");
  }
  WebhookAnswer answer = answer_review(path, req.body(), config);
  return {answer.status, "application/json", std::move(answer.body)};
}

// One connection: the handshake, then requests until the peer closes, a timeout or an error.
asio::awaitable<void> serve(net::TlsStream stream, std::shared_ptr<const WebhookConfig> config) {
  auto& socket = beast::get_lowest_layer(stream);
  socket.expires_after(kHandshakeTimeout);
  auto [hec] = co_await stream.async_handshake(asio::ssl::stream_base::server, net::kNoThrow);
  if (hec) {
    YH_LOG(Debug) << "webhook: TLS handshake failed: " << hec.message();
    co_return;
  }
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(kMaxHeaderBytes);
    parser.body_limit(kMaxBodyBytes);
    socket.expires_after(kIdleTimeout);
    auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, net::kNoThrow);
    if (!ec) {
      socket.expires_after(kRequestTimeout);
      std::tie(ec, n) = co_await http::async_read(stream, buffer, parser, net::kNoThrow);
    }
    Reply reply;
    bool keep_alive = false;
    if (ec == http::error::header_limit) {
      reply = failure_reply(kube::Failure::HeaderTooLarge, "over 64 KiB");
    } else if (ec == http::error::body_limit) {
      reply = failure_reply(kube::Failure::BodyTooLarge,
                            "over " + std::to_string(kMaxBodyBytes >> 20) + " MiB");
    } else if (ec && net::is_malformed_http(ec)) {
      reply = failure_reply(kube::Failure::BadRequest, ec.message());
    } else if (ec) {
      co_return;  // the peer closed or went quiet
    } else {
      reply = route(parser.get(), *config);
      keep_alive = parser.get().keep_alive();
    }
    const unsigned version = ec ? 11 : parser.get().version();
    if (!co_await net::write_simple_response(stream, version, keep_alive, reply.status,
                                             reply.content_type, std::move(reply.body)) ||
        !keep_alive) {
      break;
    }
  }
  socket.expires_after(kHandshakeTimeout);
  co_await stream.async_shutdown(net::kNoThrow);
}

}  // namespace

Result<std::unique_ptr<WebhookServer>> WebhookServer::listen(
    asio::io_context& io, const std::string& address, unsigned short port,
    std::unique_ptr<ServingCertificate> cert, WebhookConfig config) {
  boost::system::error_code ec;
  const auto ip = asio::ip::make_address(address, ec);
  if (ec) return make_error("--bind-address " + address + " is not an IP address");
  const tcp::endpoint endpoint(ip, port);
  tcp::acceptor acceptor(io);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return make_error("listening on " + address + ":" + std::to_string(port) + ": " + ec.message());
  }
  return std::unique_ptr<WebhookServer>(
      new WebhookServer(io, std::move(acceptor), std::move(cert), std::move(config)));
}

WebhookServer::WebhookServer(asio::io_context& io, tcp::acceptor acceptor,
                             std::unique_ptr<ServingCertificate> cert, WebhookConfig config)
    : io_(io),
      acceptor_(std::move(acceptor)),
      cert_(std::move(cert)),
      config_(std::make_shared<const WebhookConfig>(std::move(config))) {}

WebhookServer::~WebhookServer() { stop(); }

tcp::endpoint WebhookServer::local_endpoint() const {
  boost::system::error_code ec;
  return acceptor_.local_endpoint(ec);
}

void WebhookServer::start() {
  net::spawn_detached(acceptor_.get_executor(), accept_loop(), "webhook accept loop");
}

void WebhookServer::stop() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

asio::awaitable<void> WebhookServer::accept_loop() {
  asio::io_context& io = io_;
  while (acceptor_.is_open()) {
    auto [ec, socket] = co_await acceptor_.async_accept(io, net::kNoThrow);
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) break;
    if (ec) continue;  // e.g. EMFILE: the connection stays in the backlog until one closes
    if (*open_connections_ >= kMaxConnections) {
      YH_LOG(Warning) << "webhook: " << kMaxConnections << " connections open, closing a new one";
      continue;  // `socket` closes as it goes out of scope
    }
    net::TlsStream stream(net::TcpSocket(std::move(socket)), *cert_->current());
    ++*open_connections_;
    net::spawn_detached(
        io,
        [](net::TlsStream stream, std::shared_ptr<const WebhookConfig> config,
           std::shared_ptr<std::size_t> open) -> asio::awaitable<void> {
          const OpenConnection counted{std::move(open)};
          co_await serve(std::move(stream), std::move(config));
        }(std::move(stream), config_, open_connections_),
        "webhook connection");
  }
}

}  // namespace yurthub::admission
