// net::SocketTls (net/socket_tls.h), the hub's client TLS stream to the apiservers, against
// Asio's own TLS stream as the server over a loopback connection: a mebibyte written in several
// buffers comes back whole while reads and writes are pending together; the server's
// close_notify reads as eof and a close without it as stream_truncated, as on Asio's stream; a
// server the context does not trust fails the handshake; a wait for a silent server ends at the
// socket's deadline (base::TestClock, no sleeping). One thread runs the loop, as in the hub.
#include "net/socket_tls.h"

#include <array>
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>

#include "net/http_io.h"
#include "net/streams.h"
#include "net/tls.h"
#include "test/net/self_signed.h"

namespace yurthub::net {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

class SocketTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = make_server_tls(certificate_.certificate(), certificate_.key());
    ASSERT_TRUE(server) << server.error().message;
    server_tls_ = *server;
    trusting_.load_verify_file(certificate_.certificate());
    trusting_.set_verify_mode(asio::ssl::verify_peer);
    untrusting_.set_verify_mode(asio::ssl::verify_peer);
  }

  // Connects a client over `context` to a fresh server stream, which it returns accepted (its
  // handshake not yet done).
  std::unique_ptr<TlsStream> connect(asio::ssl::context& context) {
    tcp::acceptor acceptor(io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    client_ = std::make_unique<SocketTls>(io_.get_executor(), context);
    bool connected = false;
    client_->next_layer().async_connect(acceptor.local_endpoint(), [&](error_code ec) {
      EXPECT_FALSE(ec) << ec.message();
      connected = true;
    });
    auto server = std::make_unique<TlsStream>(acceptor.accept(io_.get_executor()), *server_tls_);
    run_until([&] { return connected; });
    return server;
  }

  // Both handshakes, to their ends; the client's outcome.
  error_code handshake(TlsStream& server) {
    std::optional<error_code> client;
    bool served = false;
    client_->async_handshake([&](error_code ec) { client = ec; });
    server.async_handshake(asio::ssl::stream_base::server, [&](error_code) { served = true; });
    run_until([&] { return client.has_value() && served; });
    EXPECT_TRUE(client.has_value()) << "the handshake never ended";
    return client.value_or(asio::error::timed_out);
  }

  template <class Done>
  void run_until(Done done) {
    for (int i = 0; i < 10000 && !done(); ++i) io_.run_for(std::chrono::milliseconds(1));
    io_.restart();
  }

  // The client's next read: its error and what it read.
  std::pair<error_code, std::string> client_reads() {
    std::optional<std::pair<error_code, std::string>> out;
    client_->async_read_some(asio::buffer(buffer_), [&](error_code ec, std::size_t n) {
      out.emplace(ec, std::string(buffer_, n));
    });
    run_until([&] { return out.has_value(); });
    EXPECT_TRUE(out.has_value()) << "the read never ended";
    return out.value_or(std::pair{asio::error::timed_out, ""});
  }

  test_support::SelfSignedCertificate certificate_{"apiserver", "subjectAltName=IP:127.0.0.1"};
  std::shared_ptr<asio::ssl::context> server_tls_;
  asio::ssl::context trusting_{asio::ssl::context::tls_client};
  asio::ssl::context untrusting_{asio::ssl::context::tls_client};
  base::TestClock clock_;
  asio::io_context io_;
  std::unique_ptr<SocketTls> client_;
  char buffer_[64];
};

TEST_F(SocketTlsTest, AMebibyteWrittenInSeveralBuffersComesBackWhole) {
  auto server = connect(trusting_);
  ASSERT_FALSE(handshake(*server));
  std::string body(1 << 20, '\0');
  for (std::size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + i * 7 % 26);
  const std::string sent = "head:" + body + ":tail";

  // The server echoes what it reads; the client writes all and reads all at once, so its reads
  // and writes are pending together (a mebibyte overflows the sockets' buffers).
  asio::co_spawn(
      io_,
      [&server, total = sent.size()]() -> asio::awaitable<void> {
        std::string chunk(8192, '\0');
        for (std::size_t echoed = 0; echoed < total;) {
          auto [rec, n] = co_await server->async_read_some(asio::buffer(chunk), kNoThrow);
          if (rec) co_return;
          auto [wec, w] = co_await asio::async_write(*server, asio::buffer(chunk, n), kNoThrow);
          if (wec) co_return;
          echoed += w;
        }
      },
      asio::detached);
  std::optional<error_code> wrote;
  const std::array<asio::const_buffer, 3> pieces{asio::buffer("head:", 5), asio::buffer(body),
                                                 asio::buffer(":tail", 5)};
  asio::async_write(*client_, pieces, [&](error_code ec, std::size_t) { wrote = ec; });
  std::string received(sent.size(), '\0');
  std::optional<error_code> read;
  asio::async_read(*client_, asio::buffer(received),
                   [&](error_code ec, std::size_t) { read = ec; });
  run_until([&] { return wrote && read; });

  ASSERT_TRUE(wrote && read) << "the echo never ended";
  EXPECT_FALSE(*wrote) << wrote->message();
  EXPECT_FALSE(*read) << read->message();
  EXPECT_TRUE(received == sent) << "the echo differs from what was written";
}

TEST_F(SocketTlsTest, TheServersCloseNotifyReadsAsEof) {
  auto server = connect(trusting_);
  ASSERT_FALSE(handshake(*server));
  asio::async_write(*server, asio::buffer("bye", 3),
                    [&](error_code, std::size_t) { server->async_shutdown([](error_code) {}); });
  EXPECT_EQ(client_reads(), (std::pair<error_code, std::string>{{}, "bye"}));
  EXPECT_EQ(client_reads().first, asio::error::eof);
}

TEST_F(SocketTlsTest, AServerClosingWithoutCloseNotifyReadsAsTruncated) {
  auto server = connect(trusting_);
  ASSERT_FALSE(handshake(*server));
  close_socket(*server);
  EXPECT_EQ(client_reads().first, asio::ssl::error::stream_truncated);
}

TEST_F(SocketTlsTest, AServerTheContextDoesNotTrustFailsTheHandshake) {
  auto server = connect(untrusting_);
  const error_code ec = handshake(*server);
  EXPECT_TRUE(ec);
  EXPECT_EQ(ec.category(), asio::error::get_ssl_category()) << ec.message();
}

TEST_F(SocketTlsTest, AReadOfASilentServerEndsAtTheSocketsDeadline) {
  auto server = connect(trusting_);
  ASSERT_FALSE(handshake(*server));
  client_->next_layer().expires_after(std::chrono::seconds(30));
  std::optional<error_code> read;
  client_->async_read_some(asio::buffer(buffer_), [&](error_code ec, std::size_t) { read = ec; });
  io_.run_for(std::chrono::milliseconds(20));  // a few polls: nothing may end it yet
  io_.restart();
  EXPECT_FALSE(read) << "ended before its deadline";

  clock_.advance(std::chrono::seconds(31));
  run_until([&] { return read.has_value(); });
  ASSERT_TRUE(read) << "never ended";
  EXPECT_EQ(*read, boost::beast::error::timeout);
}

}  // namespace
}  // namespace yurthub::net
