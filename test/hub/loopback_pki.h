// A self-signed certificate for 127.0.0.1 made once per test suite, and the TLS contexts on both
// sides of it: the server side for an in-process stand-in apiserver, the client side for what the
// hub dials it with (verifying it, as the hub verifies the apiserver). Header-only; used by
// test/hub/upstream_pool_test.cc and test/hub/proxy_test.cc.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <boost/asio/ssl/context.hpp>

#include "net/tls.h"

namespace yurthub::hub::test_support {

class LoopbackPki {
 public:
  LoopbackPki() {
    char pattern[] = "/tmp/yurthub-loopback-pki-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    const std::string cmd =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " +
        dir_ + "/k.pem -out " + dir_ +
        "/c.pem -subj /CN=apiserver -addext subjectAltName=IP:127.0.0.1 -days 1 >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }
  ~LoopbackPki() { std::filesystem::remove_all(dir_); }
  LoopbackPki(const LoopbackPki&) = delete;
  LoopbackPki& operator=(const LoopbackPki&) = delete;

  // A fresh server context for the certificate (null, with a test failure, if it cannot be made).
  std::shared_ptr<boost::asio::ssl::context> server() const {
    auto tls = net::make_server_tls(dir_ + "/c.pem", dir_ + "/k.pem");
    EXPECT_TRUE(tls) << tls.error().message;
    return tls ? *tls : nullptr;
  }
  // A fresh client context that trusts only the certificate.
  std::shared_ptr<boost::asio::ssl::context> client() const {
    auto ctx = std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_client);
    ctx->load_verify_file(dir_ + "/c.pem");
    ctx->set_verify_mode(boost::asio::ssl::verify_peer);
    return ctx;
  }

 private:
  std::string dir_;
};

}  // namespace yurthub::hub::test_support
