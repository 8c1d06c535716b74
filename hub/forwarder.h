// Forwarder: serves one client request. Picks a healthy apiserver (rr | priority), sends the
// request over a pooled TLS connection with the right identity (the hub's certificate, or none
// when the caller brings a bearer token), streaming the request body as it arrives, then hands the
// response to the ResponseRelay. What the cache and the filters do with the response is decided
// by its ResponsePlan (hub/response_plan.h). When no apiserver can be reached, reads the cache can
// answer are answered from it (ClientResponseWriter), and so are the writes the cache journals;
// anything else gets a 503 Status. A write to an object whose offline writes are still being
// replayed waits for them first.
// Called by ProxySession for every request; worker-thread only.
#pragma once

#include <chrono>
#include <concepts>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "hub/client_connection.h"
#include "hub/exchange.h"
#include "hub/request_body.h"
#include "hub/response_plan.h"
#include "hub/response_relay.h"
#include "hub/worker.h"
#include "kube/request_info.h"

namespace yurthub::hub {

// `Pool`: where connections to the apiservers come from (reuse, dial) and go back to
// (release): the worker's UpstreamPool, or a test's pool of in-memory connections
// (test/hub/memory_upstreams.h), so that the whole exchange runs without a socket.
template <class Stream, class Pool = UpstreamPool>
class Forwarder {
 public:
  using Upstream = typename Pool::Connection;

  Forwarder(std::shared_ptr<ClientConnection<Stream>> client, Worker& worker, Pool& upstreams);
  Forwarder(std::shared_ptr<ClientConnection<Stream>> client,
            Worker& worker) requires std::same_as<Pool, UpstreamPool>
      : Forwarder(std::move(client), worker, worker.pool()) {}

  // Forwards the request whose header `parser` has read (its body, if any, is still unread).
  // `client_keep_alive`: the client allows another request on this connection.
  boost::asio::awaitable<ForwardResult> forward(RequestParser& parser,
                                                const kube::RequestInfo& info,
                                                bool client_keep_alive);
  // A follower hub's list or watch on the multiplexer port (hub/proxy_session_followers_impl.h has
  // checked its certificate, its pool and the request): answered from the shared watch cache,
  // unfiltered (the follower filters for its own clients), or a 503 Status when the cache cannot
  // answer it as the apiserver would (the follower then turns to the cloud).
  boost::asio::awaitable<ForwardResult> answer_follower(RequestParser& parser,
                                                        const kube::RequestInfo& info,
                                                        bool keep_alive);

 private:
  // What the hub refuses a request with before sending it, and why.
  struct Refusal {
    kube::Failure failure;
    std::string detail;
  };
  // How one attempt at an apiserver went.
  enum class Attempt {
    Header,        // the response header arrived
    ClientFailed,  // the client's request body broke off (result.failure says if it was bad)
    Timeout,       // no response header in time
    BadResponse,   // the apiserver's response is not HTTP
    Closed,        // the connection broke while sending or before the header
  };

  // Reads what the request asks for and rewrites its header for the apiserver: hop-by-hop
  // headers, body framing, the identity the hub lends, Accept. Decides the RequestPlan.
  void prepare(RequestParser& parser, const kube::RequestInfo& info);
  // forward() for a request that must wait first (filters, its body read whole, the servers).
  boost::asio::awaitable<ForwardResult> wait_then_exchange(RequestParser& parser,
                                                           const kube::RequestInfo& info,
                                                           bool client_keep_alive);
  // The filters' first sync, for a filtered request while the filters are not ready.
  boost::asio::awaitable<std::optional<Refusal>> wait_for_filters();
  // What wait_for_servers waits for: the first health probes, and, for a write, the replay of its
  // object's offline writes (only while an apiserver is healthy to replay them to).
  bool probes_pending() const;
  bool replay_pending(const kube::RequestInfo& info) const;
  // The first health probes; then, for a write, the replay of its object's offline writes.
  boost::asio::awaitable<std::optional<Refusal>> wait_for_servers(const kube::RequestInfo& info);
  // Tries the healthy apiservers in turn until one answers; falls back to the cache or a Status.
  boost::asio::awaitable<ForwardResult> exchange(RequestParser& parser,
                                                 const kube::RequestInfo& info, bool keep_alive);
  // Sends the request on `up` and reads the response header into `rp`.
  boost::asio::awaitable<Attempt> attempt(Upstream& up, RequestParser& parser, ResponseParser& rp,
                                          const kube::RequestInfo& info, ForwardResult& result,
                                          boost::system::error_code& ec);
  // An attempt that got no response: the client's error, the cache, or a Status.
  boost::asio::awaitable<ForwardResult> attempt_failed(Attempt attempt, std::size_t server,
                                                       const boost::system::error_code& ec,
                                                       RequestParser& parser,
                                                       const kube::RequestInfo& info,
                                                       ForwardResult result);
  // The response header arrived: plans the response and relays it.
  boost::asio::awaitable<ForwardResult> relay_response(std::unique_ptr<Upstream> up,
                                                       ResponseParser& rp, RequestParser& parser,
                                                       const kube::RequestInfo& info,
                                                       bool keep_alive, ForwardResult result);
  // Checks `done` every `period` until it holds (true) or `limit` passes or the hub drains
  // (false). For conditions that flip once per process: the first health probes, the filters'
  // first sync.
  boost::asio::awaitable<bool> poll_until(std::function<bool()> done,
                                          std::chrono::steady_clock::duration limit,
                                          std::chrono::milliseconds period);
  // No apiserver answered: the cache if it can, else a 503 Status.
  boost::asio::awaitable<ForwardResult> unreachable(kube::Failure failure,
                                                    const std::string& detail,
                                                    RequestParser& parser,
                                                    const kube::RequestInfo& info, bool keep_alive,
                                                    ForwardResult result);
  // Who answers a request on the node.
  enum class LocalSource {
    NodeCache,    // offline: a read, or a write the cache journals
    SharedCache,  // the pool's shared watch cache, through the client's filters
  };
  // Answers from `source` (with `write`: a write the node cache journals). The one place a local
  // answer's writer, keep-alive and result are made, for both sources.
  boost::asio::awaitable<ForwardResult> answer_locally(RequestParser& parser,
                                                       const kube::RequestInfo& info,
                                                       bool keep_alive, ForwardResult result,
                                                       LocalSource source,
                                                       const OfflineWrite* write = nullptr);
  // Reads the whole body of a write the cache answers while offline, then answer_locally().
  boost::asio::awaitable<ForwardResult> answer_offline_write(RequestParser& parser,
                                                             const kube::RequestInfo& info,
                                                             bool keep_alive, ForwardResult result);
  // A pool-scope list or watch: answered from the shared watch cache when it admits the request
  // (through the client's filters), else forwarded as any other (forwarder_shared_impl.h).
  boost::asio::awaitable<ForwardResult> answer_shared(RequestParser& parser,
                                                      const kube::RequestInfo& info,
                                                      bool keep_alive);
  boost::asio::awaitable<ForwardResult> fail(kube::Failure failure, const std::string& detail,
                                             RequestParser& parser, bool keep_alive,
                                             ForwardResult result);
  void upstream_failed(std::size_t server, const char* kind);

  std::shared_ptr<ClientConnection<Stream>> client_;
  Worker& worker_;
  SharedState& shared_;
  Pool& upstreams_;
  unsigned client_version_ = 11;
  std::string client_authorization_;   // the client's own Authorization header, if it sent one
  bool replaying_ = false;             // the request is the journal's replay of an offline write
  Identity identity_ = Identity::Hub;  // whose credentials go upstream
  bool upgrade_ = false;               // an Upgrade request (exec, attach, port-forward)
  bool has_body_ = false;
  bool framing_doubt_ = false;  // Connection names a framing header: no connection is reused
  bool pool_scope_ = false;     // a list or watch the shared watch cache may answer
  RequestPlan plan_;
  std::unique_ptr<ResponseFilter> filter_;   // when plan_.filter
  std::optional<RequestBody<Stream>> body_;  // from prepare()
  // The response's parser and relay, per attempt and per response: members rather than locals of
  // exchange() and relay_response(), whose coroutine frames they would take past the 1020 bytes
  // Asio recycles (docs/benchmarks.md). The Forwarder lives in its ProxySession for one request.
  std::optional<ResponseParser> response_;
  std::optional<ResponseRelay<Stream, Pool>> relay_;
};

extern template class Forwarder<net::PlainStream>;
extern template class Forwarder<net::TlsStream>;

}  // namespace yurthub::hub
