// ResponseRelay: streams one apiserver response to the client, body pieces forwarded as they
// arrive (never held whole), as its ResponsePlan says. A short response fills the relay buffer
// before each write; a stream (watch, logs -f) writes every piece at once and ends promptly when
// its apiserver stream breaks, its server turns unhealthy, the client leaves or the hub drains,
// reporting why (StreamEnd). The body also goes through a BodyTransform to the filter and the
// cache's tap; a watch whose cache writes failed, or whose filter cannot correct it, is ended
// with a 410 Expired event so the client re-lists. Upgrades (exec, attach, port-forward) are
// tunnelled. Created by the Forwarder per response; worker-thread only.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include <boost/asio/awaitable.hpp>

#include "hub/body_transform.h"
#include "hub/client_connection.h"
#include "hub/exchange.h"
#include "hub/hooks/filter_status.h"
#include "hub/in_place_body.h"
#include "hub/response_plan.h"
#include "hub/worker.h"
#include "kube/request_info.h"
#include "net/http_framing.h"

namespace yurthub::hub {

// Edits the apiserver's response head `rp` has read for the client as `plan` says (the relay's
// first step): hop-by-hop headers stripped, Content-Encoding dropped when the filter replaces the
// body, the framing headers the hub's own (chunked, the parsed Content-Length, or none), the
// client's HTTP version and keep-alive. Returns whether the body goes to the client chunked, as
// its Transfer-Encoding now says (reading the header back parses it again). Also run by
// test/fuzz/upstream_response_fuzz.cc, which checks the two agree.
bool shape_client_head(ResponseParser& rp, const ResponsePlan& plan, unsigned client_version);

// `Pool`: the worker's UpstreamPool, or a test's pool of in-memory connections
// (test/hub/memory_upstreams.h). Its `Connection` has a `stream`, a `buffer` and a `server`;
// its release() takes one back after a clean response.
template <class Stream, class Pool = UpstreamPool>
class ResponseRelay {
 public:
  using Upstream = typename Pool::Connection;

  // The response whose header `rp` has read from `up`, a connection of `pool`.
  ResponseRelay(std::shared_ptr<ClientConnection<Stream>> client, Worker& worker, Pool& pool,
                const kube::RequestInfo& info, std::unique_ptr<Upstream> up, ResponseParser& rp);

  // Relays the response as `plan` says. `tap` and `filter` are used only when the plan says so;
  // a filtered body is sent re-framed (chunked) and decoded, and the tap gets what the client
  // gets. Returns `result` completed.
  boost::asio::awaitable<ForwardResult> relay(const ResponsePlan& plan, ResponseTap* tap,
                                              ResponseFilter* filter, unsigned client_version,
                                              ForwardResult result);
  // After 101 Switching Protocols: relays the header, then copies bytes both ways until one
  // side closes.
  boost::asio::awaitable<ForwardResult> tunnel(ForwardResult result);

 private:
  // Edits the response header for the client as the plan says.
  void shape_head(unsigned client_version);
  // A stream: registers it on the connection (so it can be ended from outside) and sends the
  // header at once. A reason to end it already, if any.
  boost::asio::awaitable<std::optional<StreamEnd>> start_stream();
  // A filtered watch whose filters' inputs changed: whether corrections are due, and sending them.
  // A correction is due now (it is taken: send_corrections() sends it).
  bool take_due_correction();
  boost::asio::awaitable<std::optional<StreamEnd>> send_corrections();
  // Reading the body: first what is buffered already, without I/O; then, if needs_read(), reads
  // until a stream has a piece or any other body has enough_for_a_write().
  boost::system::error_code take_ready_body();
  std::size_t enough_for_a_write() const;
  bool needs_read() const;
  boost::asio::awaitable<boost::system::error_code> read_body();
  // Why a read failed: the reason the exchange was stopped for, or the apiserver's failure.
  StreamEnd read_failure(const boost::system::error_code& ec) const;
  // A stream's read failed: what arrived before the failure (a watch's last events, before a
  // broken chunk or a closed connection) still goes to the client. The reason to end.
  boost::asio::awaitable<StreamEnd> forward_received(StreamEnd end);
  // The next piece for the client, from the bytes read (or, when the body is done without them,
  // the filter's last output), and what the relay does with it (BodyTransform::feed, finish).
  FilterStatus take_piece(std::string_view& piece);
  FilterStatus last_piece(std::string_view& piece);
  // A stream whose cache missed a write: whether the client must still be told to re-list, and
  // telling it (the piece, then a 410 Expired event).
  bool cache_failed(bool body_done) const;
  boost::asio::awaitable<ForwardResult> relist_for_cache(std::string_view piece);
  void arm_upstream_timer();
  // Ends the response early: tells the client as the reason requires (a 410 event, a clean last
  // chunk, or a cut) and reports it. When nothing reached the client yet, the result's status is
  // 0 and the Forwarder answers instead (relay_response).
  boost::asio::awaitable<ForwardResult> end_early(StreamEnd end);
  // The response was relayed whole: the upstream connection goes back to the pool if clean.
  ForwardResult complete(bool upstream_keep_alive);

  std::shared_ptr<ClientConnection<Stream>> client_;
  SharedState& shared_;
  Pool& pool_;
  const kube::RequestInfo& info_;
  std::unique_ptr<Upstream> up_;
  ResponseParser& rp_;
  ResponsePlan plan_;
  ResponseTap* tap_ = nullptr;
  ResponseFilter* filter_ = nullptr;
  std::optional<BodyTransform> feed_;
  std::optional<net::BodyFramer> framer_;
  std::optional<InPlaceBody> body_;
  bool client_chunked_ = false;  // the body goes to the client chunked (shape_head)
  std::chrono::steady_clock::time_point stream_deadline_;  // a stream's, from start_stream()
  ForwardResult result_;
};

extern template class ResponseRelay<net::PlainStream>;
extern template class ResponseRelay<net::TlsStream>;

}  // namespace yurthub::hub
