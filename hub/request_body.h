// RequestBody: a client's request body as the Forwarder sends it on. It is streamed to the
// apiserver piece by piece through the connection's relay buffer (never held whole), or read
// whole first when the cache needs it (a TokenRequest it keys its answer by, a write it journals
// offline), bounded in size. The whole body has one deadline, whatever its pace: a fresh timeout
// per read would let a client trickling a byte at a time hold a slot for ever. Owned by the
// Forwarder, one per request; worker-thread only.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "hub/client_connection.h"
#include "hub/exchange.h"

namespace yurthub::hub {

template <class Stream>
class RequestBody {
 public:
  RequestBody(std::shared_ptr<ClientConnection<Stream>> client,
              std::chrono::steady_clock::time_point deadline);

  struct WholeRead {
    bool complete = false;                 // read to its end: bytes() holds it
    std::optional<kube::Failure> failure;  // what to answer; neither: the client went away
  };
  // Reads the rest of the body into bytes(), at most `limit` bytes.
  boost::asio::awaitable<WholeRead> read_whole(RequestParser& parser, std::size_t limit);
  bool read_whole_already() const { return whole_; }
  const std::string& bytes() const { return bytes_; }

  enum class Sent { All, ClientFailed, UpstreamFailed };
  // Sends the request's head and its body to `up`: bytes() when read whole, else each piece as
  // it arrives (re-chunked if it came chunked). Counts the body in result.request_bytes; on
  // ClientFailed, result.failure says what to answer (none: the client went away). `Upstream`:
  // an UpstreamConnection, or a test's in-memory one (a `stream` and `reused`).
  template <class Upstream>
  boost::asio::awaitable<Sent> send(Upstream& up, RequestParser& parser, ForwardResult& result);

 private:
  // Reads the next piece into the relay buffer; req.body().size is then what is left unused.
  boost::asio::awaitable<boost::system::error_code> read_piece(RequestParser& parser, char* buf);

  std::shared_ptr<ClientConnection<Stream>> client_;
  std::chrono::steady_clock::time_point deadline_;
  std::string bytes_;
  bool whole_ = false;
};

extern template class RequestBody<net::PlainStream>;
extern template class RequestBody<net::TlsStream>;

}  // namespace yurthub::hub
