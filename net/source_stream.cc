// SourceStream: connecting, plain or over TLS; see source_stream.h.
#include "net/source_stream.h"

#include <boost/asio/ip/tcp.hpp>

#include "base/url.h"
#include "net/http_io.h"
#include "net/tls.h"

namespace yurthub::net {
namespace asio = boost::asio;

std::string SourceAddress::authority() const { return base::host_port(host, std::to_string(port)); }

SourceStream::SourceStream(asio::any_io_executor executor, const SourceAddress& address)
    : executor_(std::move(executor)), address_(address) {
  if (address_.tls) {
    tls_.emplace(executor_, *address_.tls);
  } else {
    plain_.emplace(executor_);
  }
}

asio::awaitable<Status> SourceStream::connect() {
  const std::string where = address_.authority();
  boost::system::error_code aec;
  const auto ip = asio::ip::make_address(address_.host, aec);
  if (aec) co_return make_error("host " + address_.host + " is not an IP address");
  auto [cec] =
      co_await socket().async_connect(asio::ip::tcp::endpoint(ip, address_.port), kNoThrow);
  if (cec) co_return make_error("connecting to " + where + ": " + cec.message());
  if (!tls_) co_return Status{};
  if (auto named = name_server(tls_->native_handle(), address_.host, true); !named) {
    co_return make_error("cannot verify " + where + ": " + named.error().message);
  }
  auto [hec] = co_await tls_->async_handshake(asio::ssl::stream_base::client, kNoThrow);
  if (hec) co_return make_error("TLS handshake with " + where + ": " + hec.message());
  co_return Status{};
}

}  // namespace yurthub::net
