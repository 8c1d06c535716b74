// Forwarder: serves one client request. Picks a healthy apiserver (rr | priority), sends the
// request over a pooled TLS connection with the right identity (the hub's certificate, or none
// when the caller brings a bearer token), streaming the request body as it arrives, then hands the
// response to the ResponseRelay. When the node cache will keep the response, it asks the
// apiserver for JSON and taps the body. When no apiserver can be reached, reads the cache can
// answer are answered from it (ClientResponseWriter), and so are the writes the cache journals;
// anything else gets a 503 Status. A write to an object whose offline writes are still being
// replayed waits for them first.
// Called by ProxySession for every request; worker-thread only.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "hub/client_connection.h"
#include "hub/exchange.h"
#include "hub/worker.h"
#include "kube/request_info.h"

namespace yurthub::hub {

template <class Stream>
class Forwarder {
 public:
  Forwarder(std::shared_ptr<ClientConnection<Stream>> client, Worker& worker);

  // Forwards the request whose header `parser` has read (its body, if any, is still unread).
  // `client_keep_alive`: the client allows another request on this connection.
  boost::asio::awaitable<ForwardResult> forward(RequestParser& parser,
                                                const kube::RequestInfo& info,
                                                bool client_keep_alive);

 private:
  // Checks `done` every `period` until it holds (true) or `limit` passes or the hub drains
  // (false). For conditions that flip once per process: the first health probes, the filters'
  // first sync.
  boost::asio::awaitable<bool> poll_until(std::function<bool()> done,
                                          std::chrono::steady_clock::duration limit,
                                          std::chrono::milliseconds period);
  // Reads the next piece of the client's request body into `buf` (kRelayBufferBytes);
  // req.body().size is then what is left unused of it.
  boost::asio::awaitable<boost::system::error_code> read_body_piece(RequestParser& parser,
                                                                    char* buf);
  // Reads the rest of the request body into request_body_, at most `limit` bytes.
  struct BodyRead {
    bool complete = false;                 // read to its end
    std::optional<kube::Failure> failure;  // what to answer; neither: the client went away
  };
  boost::asio::awaitable<BodyRead> read_whole_body(RequestParser& parser, std::size_t limit);
  boost::asio::awaitable<bool> send_request(UpstreamConnection& up, RequestParser& parser,
                                            ForwardResult& result, bool& client_failed);
  // No apiserver answered: the cache if it can, else a 503 Status.
  boost::asio::awaitable<ForwardResult> unreachable(kube::Failure failure,
                                                    const std::string& detail,
                                                    RequestParser& parser,
                                                    const kube::RequestInfo& info, bool keep_alive,
                                                    ForwardResult result);
  // Answers from the cache: a read, or (with `write`) a write the cache journals.
  boost::asio::awaitable<ForwardResult> answer_offline(RequestParser& parser,
                                                       const kube::RequestInfo& info,
                                                       bool keep_alive, ForwardResult result,
                                                       const OfflineWrite* write = nullptr);
  // Reads the whole body of a write the cache answers while offline, then answer_offline().
  boost::asio::awaitable<ForwardResult> answer_offline_write(RequestParser& parser,
                                                             const kube::RequestInfo& info,
                                                             bool keep_alive, ForwardResult result);
  boost::asio::awaitable<ForwardResult> fail(kube::Failure failure, const std::string& detail,
                                             RequestParser& parser, bool keep_alive,
                                             ForwardResult result);
  void upstream_failed(std::size_t server, const char* kind);

  std::shared_ptr<ClientConnection<Stream>> client_;
  Worker& worker_;
  SharedState& shared_;
  unsigned client_version_ = 11;
  std::string client_authorization_;  // the client's own Authorization header, if it sent one
  bool replaying_ = false;            // the request is the journal's replay of an offline write
  // The request body, when it was read whole (a keyed or offline write) instead of streamed.
  std::string request_body_;
  bool body_read_ = false;
  std::chrono::steady_clock::time_point body_deadline_;  // the whole body by then
};

extern template class Forwarder<net::PlainStream>;
extern template class Forwarder<net::TlsStream>;

}  // namespace yurthub::hub
