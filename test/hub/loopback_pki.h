// A self-signed certificate for 127.0.0.1 made once per test suite, and the TLS contexts on both
// sides of it: the server side for an in-process stand-in apiserver, the client side for what the
// hub dials it with (verifying it, as the hub verifies the apiserver). Also what every stand-in
// shares: its accept loop (accept_tls) and its address (loopback_server). Header-only; used by
// test/hub/upstream_pool_test.cc, health_checker_test.cc and proxy_fixture.h.
#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "hub/flag_values.h"
#include "net/http_io.h"
#include "net/streams.h"
#include "net/tls.h"
#include "test/net/self_signed.h"

namespace yurthub::hub::test_support {

class LoopbackPki {
 public:
  LoopbackPki() = default;
  LoopbackPki(const LoopbackPki&) = delete;
  LoopbackPki& operator=(const LoopbackPki&) = delete;

  // A fresh server context for the certificate (null, with a test failure, if it cannot be made).
  std::shared_ptr<boost::asio::ssl::context> server() const {
    auto tls = net::make_server_tls(certificate_.certificate(), certificate_.key());
    EXPECT_TRUE(tls) << tls.error().message;
    return tls ? *tls : nullptr;
  }
  // A fresh client context that trusts only the certificate.
  std::shared_ptr<boost::asio::ssl::context> client() const {
    auto ctx = std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_client);
    ctx->load_verify_file(certificate_.certificate());
    ctx->set_verify_mode(boost::asio::ssl::verify_peer);
    return ctx;
  }
  // What the hub dials the stand-in with: its identity and the anonymous context, two fresh
  // client contexts.
  net::UpstreamTls upstream_tls() const {
    net::UpstreamTls tls;
    tls.hub_identity = std::make_shared<net::ReplaceableContext>(client());
    tls.anonymous = client();
    return tls;
  }

 private:
  yurthub::test_support::SelfSignedCertificate certificate_{"apiserver",
                                                            "subjectAltName=IP:127.0.0.1"};
};

// The address of a stand-in apiserver listening on 127.0.0.1:`port`.
inline ServerAddress loopback_server(const std::string& port) {
  return {"https://127.0.0.1:" + port, "127.0.0.1", port};
}

// Accepts connections on `acceptor` until it is closed, and spawns `serve(stream)` on its
// executor for each, the TLS stream not yet handshaken. `serve` returns the coroutine (a member
// coroutine called on `this`), so nothing the connection needs lives in a lambda's captures.
template <class Serve>
boost::asio::awaitable<void> accept_tls(boost::asio::ip::tcp::acceptor& acceptor,
                                        std::shared_ptr<boost::asio::ssl::context> tls,
                                        Serve serve) {
  for (;;) {
    auto [ec, socket] =
        co_await acceptor.async_accept(net::io_executor(acceptor.get_executor()), net::kNoThrow);
    if (ec) co_return;
    auto stream = std::make_shared<net::TlsStream>(std::move(socket), *tls);
    boost::asio::co_spawn(acceptor.get_executor(), serve(std::move(stream)), boost::asio::detached);
  }
}

}  // namespace yurthub::hub::test_support
