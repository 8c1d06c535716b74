// TLS context construction; see tls.h.
#include "net/tls.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>

#include <boost/asio/buffer.hpp>

namespace yurthub::net {
namespace ssl = boost::asio::ssl;

namespace {

Result<std::shared_ptr<ssl::context>> client_context(const kube::Credentials& c, bool with_cert) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  boost::system::error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  if (!c.insecure_skip_tls_verify) {
    ctx->add_certificate_authority(boost::asio::buffer(c.ca_pem), ec);
    if (ec) return make_error("cannot load the cluster CA certificate: " + ec.message());
    ctx->set_verify_mode(ssl::verify_peer, ec);
  } else {
    ctx->set_verify_mode(ssl::verify_none, ec);
  }
  if (with_cert && c.has_client_certificate()) {
    ctx->use_certificate_chain(boost::asio::buffer(c.client_cert_pem), ec);
    if (ec) return make_error("cannot load the hub's client certificate: " + ec.message());
    ctx->use_private_key(boost::asio::buffer(c.client_key_pem), ssl::context::pem, ec);
    if (ec) return make_error("cannot load the hub's client key: " + ec.message());
    if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
      return make_error("the hub's client key does not match its certificate");
    }
  }
  return ctx;
}

}  // namespace

Result<UpstreamTls> make_upstream_tls(const kube::Credentials& credentials) {
  UpstreamTls tls;
  auto hub = client_context(credentials, true);
  if (!hub) return hub.error();
  auto anonymous = client_context(credentials, false);
  if (!anonymous) return anonymous.error();
  tls.hub_identity = std::make_shared<ReplaceableContext>(std::move(*hub));
  tls.anonymous = std::move(*anonymous);
  tls.hub_token = std::make_shared<ReplaceableToken>(std::make_shared<const std::string>(
      credentials.has_client_certificate() ? "" : credentials.token));
  tls.server_name_override = credentials.tls_server_name;
  tls.verify_peer = !credentials.insecure_skip_tls_verify;
  return tls;
}

std::string UpstreamTls::hub_authorization() const {
  if (!hub_token) return {};
  const auto token = hub_token->get();
  return token && !token->empty() ? "Bearer " + *token : std::string();
}

Result<std::shared_ptr<ssl::context>> make_client_context(const kube::Credentials& credentials) {
  return client_context(credentials, true);
}

namespace {

std::shared_ptr<ssl::context> server_context() {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                   ssl::context::single_dh_use);
  // A client may not renegotiate: each renegotiation costs the hub a handshake's CPU, and
  // kube-apiserver's Go TLS refuses it too.
  SSL_CTX_set_options(ctx->native_handle(), SSL_OP_NO_RENEGOTIATION);
  return ctx;
}

}  // namespace

Result<std::shared_ptr<ssl::context>> make_server_tls(const std::string& cert_file,
                                                      const std::string& key_file) {
  auto ctx = server_context();
  boost::system::error_code ec;
  ctx->use_certificate_chain_file(cert_file, ec);
  if (ec) return make_error("cannot load --tls-cert-file " + cert_file + ": " + ec.message());
  ctx->use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec) return make_error("cannot load --tls-private-key-file " + key_file + ": " + ec.message());
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return make_error("--tls-private-key-file does not match --tls-cert-file");
  }
  return ctx;
}

Result<std::shared_ptr<ssl::context>> make_server_tls_from_pem(const std::string& cert_pem,
                                                               const std::string& key_pem) {
  auto ctx = server_context();
  boost::system::error_code ec;
  ctx->use_certificate_chain(boost::asio::buffer(cert_pem), ec);
  if (ec) return make_error("cannot load the serving certificate: " + ec.message());
  ctx->use_private_key(boost::asio::buffer(key_pem), ssl::context::pem, ec);
  if (ec) return make_error("cannot load the serving key: " + ec.message());
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return make_error("the serving key does not match its certificate");
  }
  return ctx;
}

Result<std::string> random_token() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return make_error("OpenSSL's random generator failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

bool secrets_equal(std::string_view a, std::string_view b) {
  return !a.empty() && a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace yurthub::net
