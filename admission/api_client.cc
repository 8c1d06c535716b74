// The apiserver client; see api_client.h.
#include "admission/api_client.h"

#include <fstream>
#include <sstream>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http.hpp>

#include "base/clock.h"
#include "base/url.h"
#include "kube/kubeconfig.h"
#include "net/files.h"
#include "net/http_io.h"

namespace yurthub::admission {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr const char* kUserAgent = "pool-admission/0.1.0";

// "https://host[:port][/]" -> host and port (443 by default); an IPv6 literal in brackets.
Status split_server(const std::string& url, std::string& host, std::string& port) {
  constexpr std::string_view kScheme = "https://";
  if (!url.starts_with(kScheme)) return make_error("server " + url + " is not an https:// URL");
  std::string authority = url.substr(kScheme.size());
  if (auto slash = authority.find('/'); slash != std::string::npos) {
    if (authority.find_first_not_of('/', slash) != std::string::npos) {
      return make_error("server " + url + " has a path, which pool-admission does not support");
    }
    authority.resize(slash);
  }
  port = "443";
  if (authority.starts_with("[")) {
    const auto close = authority.find(']');
    if (close == std::string::npos) return make_error("server " + url + ": unclosed [");
    host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return make_error("server " + url + ": bad port");
      port = authority.substr(close + 2);
    }
  } else if (auto colon = authority.rfind(':'); colon != std::string::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  } else {
    host = authority;
  }
  if (host.empty() || port.empty() || port.find_first_not_of("0123456789") != std::string::npos) {
    return make_error("server " + url + " has no host or a bad port");
  }
  return Status{};
}

}  // namespace

Result<std::shared_ptr<const ApiClient>> ApiClient::make(const std::string& server,
                                                         const kube::Credentials& credentials,
                                                         std::string token_file) {
  std::shared_ptr<ApiClient> client(new ApiClient());
  if (Status split = split_server(server, client->host_, client->port_); !split) {
    return split.error();
  }
  client->url_ = "https://" + base::host_port(client->host_, client->port_);
  auto tls = net::make_upstream_tls(credentials);
  if (!tls) return tls.error();
  client->tls_ = std::move(*tls);
  client->token_ = credentials.has_client_certificate() ? "" : credentials.token;
  client->token_file_ = std::move(token_file);
  return std::shared_ptr<const ApiClient>(std::move(client));
}

Result<std::shared_ptr<const ApiClient>> ApiClient::from_kubeconfig(const std::string& path) {
  auto credentials = net::load_kubeconfig(path);
  if (!credentials) return credentials.error();
  return make(credentials->server, *credentials, "");
}

Result<std::shared_ptr<const ApiClient>> ApiClient::in_cluster(const std::string& service_host,
                                                               const std::string& service_port,
                                                               const std::string& account_dir) {
  if (service_host.empty() || service_port.empty()) {
    return make_error(
        "no --kubeconfig, and KUBERNETES_SERVICE_HOST/PORT are not set (not in a pod)");
  }
  kube::Credentials credentials;
  auto ca = net::read_config_file(account_dir + "/ca.crt");
  if (!ca) return ca.error();
  credentials.ca_pem = std::move(*ca);
  const std::string token_file = account_dir + "/token";
  auto token = net::read_config_file(token_file);
  if (!token) return token.error();
  return make("https://" + base::host_port(service_host, service_port), credentials, token_file);
}

std::string ApiClient::authorization() const {
  if (!token_file_.empty()) {
    // A failed read keeps nothing: the apiserver's 401 then says what is wrong.
    auto token = net::read_config_file(token_file_);
    std::string text = token ? *token : std::string();
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    return text.empty() ? std::string() : "Bearer " + text;
  }
  return token_.empty() ? std::string() : "Bearer " + token_;
}

asio::awaitable<Result<std::unique_ptr<ApiConnection>>> ApiClient::connect(
    asio::any_io_executor executor, std::chrono::milliseconds timeout) const {
  const auto deadline = base::Clock::now() + timeout;
  tcp::resolver resolver(executor);
  const auto flags =
      net::is_ip_literal(host_) ? tcp::resolver::numeric_host : tcp::resolver::flags{};
  auto [rec, endpoints] = co_await resolver.async_resolve(
      host_, port_, flags | tcp::resolver::numeric_service, net::kNoThrow);
  if (rec) co_return make_error(ErrorCode::Unavailable, "resolve " + host_ + ": " + rec.message());
  auto connection = std::make_unique<ApiConnection>(executor, *tls_.hub_identity->get());
  auto& socket = beast::get_lowest_layer(connection->stream);
  socket.expires_at(deadline);
  auto [cec, endpoint] = co_await socket.async_connect(endpoints, net::kNoThrow);
  if (cec) co_return make_error(ErrorCode::Unavailable, "connect " + url_ + ": " + cec.message());
  const std::string& name = tls_.server_name_override.empty() ? host_ : tls_.server_name_override;
  if (auto named = net::name_server(connection->stream.native_handle(), name, tls_.verify_peer);
      !named) {
    co_return make_error("cannot verify " + url_ + ": " + named.error().message);
  }
  auto [hec] =
      co_await connection->stream.async_handshake(asio::ssl::stream_base::client, net::kNoThrow);
  if (hec) {
    co_return make_error(ErrorCode::Unavailable,
                         "TLS handshake with " + url_ + ": " + hec.message());
  }
  co_return std::move(connection);
}

asio::awaitable<Status> ApiClient::send(ApiConnection& connection, http::verb method,
                                        const std::string& target, std::string body,
                                        const std::string& content_type) const {
  http::request<http::string_body> req{method, target, 11};
  req.set(http::field::host, base::host_port(host_, port_));
  req.set(http::field::user_agent, kUserAgent);
  req.set(http::field::accept, "application/json");
  if (auto bearer = authorization(); !bearer.empty()) req.set(http::field::authorization, bearer);
  if (!body.empty()) {
    req.set(http::field::content_type, content_type);
    req.body() = std::move(body);
  }
  req.keep_alive(false);
  req.prepare_payload();
  auto [ec, n] = co_await http::async_write(connection.stream, req, net::kNoThrow);
  if (ec) co_return make_error(ErrorCode::Unavailable, "sending to " + url_ + ": " + ec.message());
  co_return Status{};
}

asio::awaitable<Result<ApiAnswer>> ApiClient::call(asio::any_io_executor executor,
                                                   http::verb method, const std::string& target,
                                                   std::string body,
                                                   const std::string& content_type,
                                                   std::chrono::milliseconds timeout) const {
  const auto deadline = base::Clock::now() + timeout;
  auto connection = co_await connect(executor, timeout);
  if (!connection) co_return connection.error();
  beast::get_lowest_layer((*connection)->stream).expires_at(deadline);
  if (Status sent = co_await send(**connection, method, target, std::move(body), content_type);
      !sent) {
    co_return sent.error();
  }
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxApiAnswerBytes);
  auto [ec, n] = co_await http::async_read((*connection)->stream, (*connection)->buffer, parser,
                                           net::kNoThrow);
  if (ec) {
    co_return make_error(ErrorCode::Unavailable, std::string(http::to_string(method)) + " " +
                                                     target + " at " + url_ +
                                                     ": reading the answer: " + ec.message());
  }
  co_return ApiAnswer{parser.get().result_int(), std::move(parser.get().body())};
}

}  // namespace yurthub::admission
