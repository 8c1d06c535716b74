// TLS context construction; see tls.h.
#include "net/tls.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/address.hpp>

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

bool is_ip_literal(const std::string& host) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  return !ec;
}

Status name_server(SSL* ssl, const std::string& name, bool verify_peer) {
  const bool ip = is_ip_literal(name);
  if (!ip) SSL_set_tlsext_host_name(ssl, name.c_str());
  if (!verify_peer) return Status{};
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  X509_VERIFY_PARAM_set_hostflags(
      param, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  const int named = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
                       : X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
  if (named != 1) return make_error("bad host name " + name);
  return Status{};
}

Result<std::shared_ptr<X509_STORE>> make_client_ca_store(const std::string& ca_pem) {
  std::shared_ptr<X509_STORE> store(X509_STORE_new(), X509_STORE_free);
  if (!store) return make_error("cannot allocate a certificate store");
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size())), BIO_free);
  int added = 0;
  while (bio) {
    X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
    if (cert == nullptr) break;
    added += X509_STORE_add_cert(store.get(), cert) == 1;
    X509_free(cert);
  }
  ERR_clear_error();  // the end of the PEM text reads as an error
  if (added == 0) return make_error("no CA certificate in the cluster CA bundle");
  return store;
}

void require_client_certificate(SSL* ssl, const std::shared_ptr<X509_STORE>& store) {
  SSL_set1_verify_cert_store(ssl, store.get());
  SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
}

std::optional<PeerCertificate> verified_peer(SSL* ssl) {
  if (SSL_get_verify_result(ssl) != X509_V_OK) return std::nullopt;
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr) return std::nullopt;
  PeerCertificate peer;
  const X509_NAME* subject = X509_get_subject_name(cert);
  for (int i = 0; i < X509_NAME_entry_count(subject); ++i) {
    const X509_NAME_ENTRY* entry = X509_NAME_get_entry(subject, i);
    const int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry));
    if (nid != NID_commonName && nid != NID_organizationName) continue;
    const ASN1_STRING* data = X509_NAME_ENTRY_get_data(entry);
    std::string value(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                      static_cast<std::size_t>(ASN1_STRING_length(data)));
    if (nid == NID_commonName) {
      peer.common_name = std::move(value);
    } else {
      peer.organizations.push_back(std::move(value));
    }
  }
  return peer;
}

}  // namespace yurthub::net
