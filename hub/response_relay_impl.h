// The ResponseRelay's member templates; see response_relay.h. Included by response_relay.cc,
// which instantiates them for the hub's two client streams over its UpstreamConnection, and by
// the request path's tests over in-memory streams (test/hub/response_relay_streams_test.cc,
// proxy_session_streams_test.cc).
//
// The body is parsed where it was read, in the upstream connection's buffer (InPlaceBody), and
// goes to the client (or the filter and tap) from there: it is never held whole, a watch event
// reaches the client as soon as its chunk arrives, and a byte is not copied between the read and
// the client's write.
#pragma once

#include "hub/response_relay.h"

#include <limits>

#include "base/clock.h"
#include "base/log.h"
#include "hub/client_stream.h"
#include "hub/watch_corrections.h"
#include "net/http_io.h"
#include "net/tunnel.h"

namespace yurthub::hub {
namespace asio = boost::asio;
namespace beast = boost::beast;

namespace response_relay_detail {

// What a client that must re-list sees: the apiserver's own way of saying "start over".
inline const std::string& relist_event(StreamEnd end) {
  static const std::string cache = kube::watch_error_event(kube::api_error(
      kube::Failure::Expired, "the hub's cache of this list failed a write; list again"));
  static const std::string filter = kube::watch_error_event(
      kube::api_error(kube::Failure::Expired, "what the hub's filters read changed; list again"));
  return end == StreamEnd::CacheRelist ? cache : filter;
}

}  // namespace response_relay_detail

template <class Stream, class Pool>
ResponseRelay<Stream, Pool>::ResponseRelay(std::shared_ptr<ClientConnection<Stream>> client,
                                           Worker& worker, Pool& pool,
                                           const kube::RequestInfo& info,
                                           std::unique_ptr<Upstream> up, ResponseParser& rp)
    : client_(std::move(client)),
      shared_(worker.shared()),
      pool_(pool),
      info_(info),
      up_(std::move(up)),
      rp_(rp) {}

template <class Stream, class Pool>
asio::awaitable<ForwardResult> ResponseRelay<Stream, Pool>::relay(const ResponsePlan& plan,
                                                                  ResponseTap* tap,
                                                                  ResponseFilter* filter,
                                                                  unsigned client_version,
                                                                  ForwardResult result) {
  plan_ = plan;
  result_ = result;
  tap_ = plan_.tap ? tap : nullptr;
  filter_ = plan_.filter ? filter : nullptr;
  feed_.emplace(tap_, filter_, plan_.decode_gzip, info_.is_watch());
  const bool upstream_keep_alive = rp_.keep_alive();
  shape_head(client_version);
  net::write_message_head(client_->response_head, rp_.get());
  framer_.emplace(client_->response_head, client_chunked_);
  body_.emplace(rp_, up_->buffer);
  if (plan_.streaming) {
    const std::optional<StreamEnd> end = co_await start_stream();
    if (end) co_return co_await end_early(*end);
  }
  // Each step is a coroutine only where it may wait: a coroutine frame per piece costs as much as
  // a header lookup, and a small response's body is usually here already.
  for (;;) {
    body_->release();  // the last piece has gone to the client
    std::optional<StreamEnd> end;
    if (take_due_correction()) end = co_await send_corrections();
    if (end) co_return co_await end_early(*end);
    std::string_view piece;
    FilterStatus status = FilterStatus::Hold;
    if (!rp_.is_done()) {
      boost::system::error_code ec = take_ready_body();
      if (!ec && needs_read()) ec = co_await read_body();
      if (ec) {
        end = read_failure(ec);
        if (plan_.streaming) end = co_await forward_received(*end);
        co_return co_await end_early(*end);
      }
      status = take_piece(piece);
    } else {
      status = last_piece(piece);  // no body, or it ended with the last piece
    }
    const bool body_done = rp_.is_done();
    end = stream_end_of(status);
    if (end) co_return co_await end_early(*end);
    if (cache_failed(body_done)) co_return co_await relist_for_cache(piece);
    if (status == FilterStatus::Hold) continue;  // nothing for the client yet: read on
    if (!co_await write_to_client(client_, framer_->frame(piece, body_done), plan_.streaming)) {
      co_return co_await end_early(StreamEnd::ClientGone);
    }
    if (framer_->done()) co_return complete(upstream_keep_alive);
  }
}

template <class Stream, class Pool>
bool ResponseRelay<Stream, Pool>::cache_failed(bool body_done) const {
  // Asked of the tap, not answered by the filter: the cache's writer thread may fail a write at
  // any time, whatever the piece was. A client that gets the body as the apiserver encoded it
  // cannot be sent an event, and a body that is done is complete for the client.
  return plan_.streaming && feed_->failed() && !plan_.client_encoded && !body_done;
}

template <class Stream, class Pool>
asio::awaitable<ForwardResult> ResponseRelay<Stream, Pool>::relist_for_cache(
    std::string_view piece) {
  // The cache missed a write for this list: send what arrived, then make the client re-list.
  const bool sent = co_await write_to_client(client_, framer_->frame(piece, false), true);
  co_return co_await end_early(sent ? StreamEnd::CacheRelist : StreamEnd::ClientGone);
}

template <class Stream, class Pool>
void ResponseRelay<Stream, Pool>::shape_head(unsigned client_version) {
  client_chunked_ = shape_client_head(rp_, plan_, client_version);
  result_.status = rp_.get().result_int();
}

template <class Stream, class Pool>
asio::awaitable<std::optional<StreamEnd>> ResponseRelay<Stream, Pool>::start_stream() {
  // A watch ends by the apiserver's own timeout; this deadline only bounds a stream nobody ends.
  stream_deadline_ = base::Clock::now() + (info_.timeout_seconds
                                               ? std::chrono::seconds(*info_.timeout_seconds + 60)
                                               : 2 * shared_.options.min_request_timeout);
  auto& active = client_->active;
  active.relaying_stream(filter_, &*feed_, client_chunked_);
  // A drain or health change that happened while this request waited for its response header
  // found no stream to end; end it now rather than never.
  if (shared_.draining) active.stop(StreamEnd::HubDraining);
  if (!shared_.servers.healthy(up_->server)) active.stop(StreamEnd::ServerUnhealthy);
  start_client_watch(client_);
  // The client must see the header at once, not with the first event (which may be minutes away).
  const bool head_sent = co_await write_streaming(client_, framer_->frame({}, false));
  if (!head_sent) co_return StreamEnd::ClientGone;
  // The cache of this list is stale: make the client re-list now, not at the next event.
  if (feed_->failed() && !plan_.client_encoded) co_return StreamEnd::CacheRelist;
  // A reactive watch starts with a correction: the client's objects may have been filtered under
  // an older view (a change during its list, or between two of its watches).
  if (filter_ && filter_->reactive()) active.correction_at_start();
  co_return std::nullopt;
}

template <class Stream, class Pool>
bool ResponseRelay<Stream, Pool>::take_due_correction() {
  // Corrections asked for while the last write was in progress (or at the start).
  return plan_.streaming && filter_ && client_->active.take_correction();
}

template <class Stream, class Pool>
asio::awaitable<std::optional<StreamEnd>> ResponseRelay<Stream, Pool>::send_corrections() {
  std::string events;
  const FilterStatus status = feed_->correct(&events);
  const std::optional<StreamEnd> end = stream_end_of(status);
  if (status == FilterStatus::Hold) events.clear();  // nothing to correct
  if (end || events.empty()) co_return end;
  const bool sent = co_await write_to_client(client_, framer_->frame(events, false), true);
  co_return sent ? std::nullopt : std::optional<StreamEnd>(StreamEnd::ClientGone);
}

template <class Stream, class Pool>
boost::system::error_code ResponseRelay<Stream, Pool>::take_ready_body() {
  arm_upstream_timer();
  if (client_->active.stopped()) return asio::error::operation_aborted;
  // Body bytes that came with the header (a small response's whole body) or with the last read
  // are taken first: an async read that needs no I/O still costs a trip through the event loop
  // before the client's write.
  return body_->parse(enough_for_a_write());
}

template <class Stream, class Pool>
std::size_t ResponseRelay<Stream, Pool>::enough_for_a_write() const {
  // A stream is written as each piece arrives (all that is buffered); any other body is written
  // kRelayBufferBytes at a time (an apiserver may send one small TLS record per chunk, and a
  // write per record is slow).
  return plan_.streaming ? std::numeric_limits<std::size_t>::max() : kRelayBufferBytes;
}

template <class Stream, class Pool>
bool ResponseRelay<Stream, Pool>::needs_read() const {
  const std::size_t have = body_->piece().size();
  return !rp_.is_done() && (have == 0 || (!plan_.streaming && have < kRelayBufferBytes));
}

template <class Stream, class Pool>
asio::awaitable<boost::system::error_code> ResponseRelay<Stream, Pool>::read_body() {
  auto& active = client_->active;
  boost::system::error_code ec;
  do {
    arm_upstream_timer();
    if (active.stopped()) co_return asio::error::operation_aborted;
    active.upstream_read(plan_.streaming);
    auto [rec, read] = co_await up_->stream.async_read_some(body_->prepare(), net::kNoThrow);
    body_->commit(read);
    active.upstream_read(false);
    co_await wait_for_correction_writer(*client_);
    ec = rec == asio::error::eof ? body_->end_of_stream() : rec;
    if (!ec) ec = body_->parse(enough_for_a_write());
  } while (!ec && !plan_.streaming && needs_read());
  co_return ec;
}

template <class Stream, class Pool>
StreamEnd ResponseRelay<Stream, Pool>::read_failure(const boost::system::error_code& ec) const {
  if (client_->active.stopped()) return *client_->active.stopped();
  return ec == beast::error::timeout ? StreamEnd::UpstreamTimeout : StreamEnd::UpstreamClosed;
}

template <class Stream, class Pool>
asio::awaitable<StreamEnd> ResponseRelay<Stream, Pool>::forward_received(StreamEnd end) {
  if (end == StreamEnd::ClientGone || body_->piece().empty()) co_return end;
  std::string_view piece;
  const FilterStatus status = take_piece(piece);
  const std::optional<StreamEnd> filter_end = stream_end_of(status);
  if (status == FilterStatus::Hold) piece = {};  // nothing whole for the client in what arrived
  if (filter_end) co_return *filter_end;
  if (!piece.empty() && !co_await write_to_client(client_, framer_->frame(piece, false), true)) {
    co_return StreamEnd::ClientGone;
  }
  co_return end;
}

template <class Stream, class Pool>
FilterStatus ResponseRelay<Stream, Pool>::take_piece(std::string_view& piece) {
  const std::string_view received = body_->piece();
  result_.response_bytes += received.size();
  FilterStatus status = feed_->feed(received);
  // The body's last bytes: the filter's last output (a get's object) joins them.
  const bool goes_on = status == FilterStatus::Send || status == FilterStatus::Hold;
  if (goes_on && rp_.is_done()) status = feed_->finish();
  piece = filter_ ? std::string_view(feed_->out()) : received;
  return status;
}

template <class Stream, class Pool>
FilterStatus ResponseRelay<Stream, Pool>::last_piece(std::string_view& piece) {
  feed_->out().clear();
  const FilterStatus status = feed_->finish();
  if (filter_) piece = feed_->out();
  return status;
}

template <class Stream, class Pool>
void ResponseRelay<Stream, Pool>::arm_upstream_timer() {
  auto& up_tcp = beast::get_lowest_layer(up_->stream);
  if (!plan_.streaming)
    up_tcp.expires_after(kUpstreamIoTimeout);
  else if (info_.is_watch())
    up_tcp.expires_at(stream_deadline_);
  else
    up_tcp.expires_after(kLongRunningIdleTimeout);
}

template <class Stream, class Pool>
asio::awaitable<ForwardResult> ResponseRelay<Stream, Pool>::end_early(StreamEnd end) {
  switch (end) {
    case StreamEnd::FilterRelist:
    case StreamEnd::CacheRelist:
      // The 410 event, then the last chunk.
      co_await write_to_client(
          client_, framer_->frame(response_relay_detail::relist_event(end), true), true);
      break;
    case StreamEnd::ClientGone:
      break;  // nobody to tell
    case StreamEnd::FilterError:
      // A watch's events framed before the break are whole: they go out first.
      if (plan_.streaming && !feed_->out().empty())
        co_await write_to_client(client_, framer_->frame(feed_->out(), false), true);
      // Cut (no last chunk), so the client cannot mistake a truncated body for a complete one.
      YH_LOG(Warning) << kube::verb_name(info_.verb) << " " << info_.path << " for "
                      << info_.component << " cut short: " << feed_->error();
      break;
    default:
      // A stream the client can resume (a watch) ends cleanly; anything else is cut short.
      if (plan_.streaming && client_chunked_) co_await end_chunked_stream(client_);
      YH_LOG(Info) << kube::verb_name(info_.verb) << " " << info_.path << " for " << info_.component
                   << " ended early: " << stream_end_name(end);
  }
  if (end == StreamEnd::UpstreamTimeout || end == StreamEnd::UpstreamClosed) {
    shared_.metrics.upstream_errors
        .with({shared_.servers.address(up_->server).url, "stream_broken"})
        .inc();
    if (shared_.health) shared_.health->probe_soon(up_->server);
  }
  feed_->end(false);
  stop_client_watch(*client_);
  if (!framer_->head_framed()) result_.status = 0;  // nothing reached the client
  result_.end = end;
  result_.keep_alive = false;
  co_return result_;
}

template <class Stream, class Pool>
ForwardResult ResponseRelay<Stream, Pool>::complete(bool upstream_keep_alive) {
  body_->release();
  feed_->end(true);
  stop_client_watch(*client_);
  result_.keep_alive = plan_.keep_alive;
  // Bytes after the end of the response are a framing doubt (a response the hub did not ask
  // for): such a connection is closed, never reused for another client.
  if (upstream_keep_alive && !client_->active.stopped() && up_->buffer.size() == 0) {
    pool_.release(std::move(up_));
  }
  return result_;
}

template <class Stream, class Pool>
asio::awaitable<ForwardResult> ResponseRelay<Stream, Pool>::tunnel(ForwardResult result) {
  const std::string head = net::message_head(rp_.get());
  beast::get_lowest_layer(client_->stream).expires_after(kClientIoTimeout);
  auto [ec, n] = co_await asio::async_write(client_->stream, asio::buffer(head), net::kNoThrow);
  result.status = 101;
  result.keep_alive = false;
  if (ec) co_return result;
  client_->active.relaying_stream();
  auto bytes = co_await net::tunnel_streams(client_->stream, client_->buffer, up_->stream,
                                            up_->buffer, kLongRunningIdleTimeout);
  result.request_bytes += bytes.client_to_upstream;
  result.response_bytes += bytes.upstream_to_client;
  co_return result;
}

}  // namespace yurthub::hub
