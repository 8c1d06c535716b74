// Streaming an apiserver's response to the client; see response_relay.h.
//
// Bodies move through one fixed relay buffer with Beast's buffer_body (the "relay" pattern of
// Beast's HTTP examples): neither body is ever held whole, and a watch event reaches the client as
// soon as its chunk arrives.
#include "hub/response_relay.h"

#include <boost/algorithm/string/predicate.hpp>

#include "base/gzip.h"
#include "base/log.h"
#include "hub/client_stream.h"
#include "hub/watch_corrections.h"
#include "net/http_framing.h"
#include "net/http_io.h"
#include "net/tunnel.h"

namespace yurthub::hub {
namespace asio = boost::asio;
namespace beast = boost::beast;

namespace {

// Moves body bytes that are already buffered into the parser's remaining body space, without I/O.
// Beast's async_read_some yields at most one chunk per call; an apiserver writing small chunks
// would otherwise cost one client write per chunk. Only bytes already received are taken, so a
// watch event is never held back waiting for more. Returns a parse error, if any.
template <class Parser>
boost::system::error_code take_buffered_body(Parser& parser, beast::flat_buffer& buffer) {
  boost::system::error_code ec;
  while (!parser.is_done() && parser.get().body().size > 0 && buffer.size() > 0) {
    const std::size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == http::error::need_more || ec == http::error::need_buffer) return {};
    if (ec || used == 0) return ec;
  }
  return {};
}

// What a client that must re-list sees: the apiserver's own way of saying "start over".
const std::string& cache_relist_event() {
  static const std::string event = kube::watch_error_event(kube::api_error(
      kube::Failure::Expired, "the hub's cache of this list failed a write; list again"));
  return event;
}
const std::string& filter_relist_event() {
  static const std::string event = kube::watch_error_event(
      kube::api_error(kube::Failure::Expired, "what the hub's filters read changed; list again"));
  return event;
}

}  // namespace

// Where a relayed piece goes besides the client: decompressed if needed, through the response
// filter (whose output then replaces the piece for the client), and to the cache's tap (which
// gets what the client gets, so the cache holds what this component was served). A piece the tap
// cannot get (bad gzip) ends the tap as incomplete; unfiltered, the client is not affected.
class BodyTransform {
 public:
  BodyTransform(ResponseTap* tap, ResponseFilter* filter, bool gzip) : tap_(tap), filter_(filter) {
    if ((tap_ || filter_) && gzip) gzip_.emplace();
  }
  // False when the filter cannot go on (bad gzip, malformed JSON): the response must be cut.
  bool feed(std::string_view piece) {
    out_.clear();
    if (broken_) return !filter_;
    if (!tap_ && !filter_) return true;
    std::string_view plain = piece;
    if (gzip_) {
      decoded_.clear();
      if (Status s = gzip_->feed(piece, decoded_); !s)
        return fail("cannot decompress: " + s.error().message);
      plain = decoded_;
    }
    if (!filter_) {
      tap_->body(plain);
      return true;
    }
    if (Status s = filter_->feed(plain, &out_); !s) return fail(s.error().message);
    if (tap_ && !out_.empty()) tap_->body(out_);
    return true;
  }
  // The body is complete: appends the filter's last output (a get's whole object) to out().
  bool finish() {
    if (!filter_ || broken_) return !broken_ || !filter_;
    if (gzip_ && !gzip_->done()) return fail("the gzip stream ended early");
    const std::size_t before = out_.size();
    if (Status s = filter_->finish(&out_); !s) return fail(s.error().message);
    if (tap_ && out_.size() > before) tap_->body(std::string_view(out_).substr(before));
    return true;
  }
  std::string& out() { return out_; }
  const std::string& error() const { return error_; }
  void end(bool complete) {
    if (tap_) tap_->end(complete && !broken_ && (!gzip_ || gzip_->done()));
  }
  bool failed() const { return tap_ && tap_->failed(); }

 private:
  bool fail(std::string why) {
    YH_LOG(Warning) << (filter_ ? "filters" : "cache") << ": a response cannot be read: " << why;
    error_ = std::move(why);
    broken_ = true;
    return !filter_;
  }
  ResponseTap* tap_;
  ResponseFilter* filter_;
  std::optional<base::GzipDecoder> gzip_;
  std::string decoded_;
  std::string out_;
  std::string error_;
  bool broken_ = false;
};

template <class Stream>
ResponseRelay<Stream>::ResponseRelay(std::shared_ptr<ClientConnection<Stream>> client,
                                     Worker& worker)
    : client_(std::move(client)), worker_(worker), shared_(worker.shared()) {}

template <class Stream>
asio::awaitable<ForwardResult> ResponseRelay<Stream>::relay(
    UpstreamConnectionPtr up, ResponseParser& rp, const kube::RequestInfo& info, bool keep_alive,
    unsigned client_version, ResponseTap* tap, ResponseFilter* filter, ForwardResult result) {
  auto& res = rp.get();
  const bool upstream_keep_alive = rp.keep_alive();
  const bool streaming = info.is_long_running() && res.result() == http::status::ok;
  const std::string_view encoding = res[http::field::content_encoding];
  const bool gzip = boost::algorithm::iequals(encoding, "gzip");
  if (filter && !encoding.empty() && !gzip) {
    YH_LOG(Warning) << "filters: cannot read a response encoded as " << encoding
                    << "; relayed unfiltered";
    filter = nullptr;
  }
  BodyTransform feed(tap, filter, gzip);
  // A filtered body is re-framed and sent decoded (the client is on this node).
  const bool client_encoded = !encoding.empty() && !filter;
  if (filter) {
    res.erase(http::field::content_encoding);
    res.erase(http::field::content_length);
  }
  net::strip_hop_by_hop(res, false);
  keep_alive = keep_alive && !streaming && !shared_.draining;
  if (client_version < 11) {
    if (res.chunked()) res.chunked(false);  // an HTTP/1.0 client reads until the connection closes
    keep_alive = false;
  } else if (filter || (!rp.is_done() && !rp.chunked() && !rp.content_length())) {
    res.chunked(true);  // body delimited by the apiserver closing: re-frame so the client can reuse
  }
  if (filter && client_version < 11) keep_alive = false;
  res.version(client_version);
  res.keep_alive(keep_alive);
  result.status = res.result_int();

  net::BodyFramer framer(net::message_head(res), res.chunked());
  char* buf = client_->relay();
  auto& active = client_->active;
  auto& up_tcp = beast::get_lowest_layer(up->stream);
  // A watch ends by the apiserver's own timeout; this deadline only bounds a stream nobody ends.
  const auto stream_deadline =
      std::chrono::steady_clock::now() + (info.timeout_seconds
                                              ? std::chrono::seconds(*info.timeout_seconds + 60)
                                              : 2 * shared_.options.min_request_timeout);
  if (streaming) {
    active.streaming = true;
    active.filter = filter;
    active.tap = tap;
    active.chunked = res.chunked();
    // A drain or health change that happened while this request waited for its response header
    // found no stream to end; end it now rather than never.
    if (shared_.draining) active.stop("hub_draining");
    if (!shared_.servers.healthy(up->server)) active.stop("server_unhealthy");
    start_client_watch(client_);
    // The client must see the header at once, not with the first event (which may be minutes away).
    const bool head_sent = co_await write_streaming(client_, framer.frame({}, false));
    if (!head_sent) active.stop("client_gone");
    if (head_sent && feed.failed() && !client_encoded) {
      // The cache of this list is stale: make the client re-list now, not at the next event.
      co_return co_await end_with_relist(framer, feed, cache_relist_event(), "cache_relist",
                                         result);
    }
  }

  // A reactive watch starts with a correction: the client's objects may have been filtered under
  // an older view (a change during its list, or between two of its watches).
  if (streaming && filter && filter->reactive()) active.correction_pending = true;
  for (;;) {
    if (streaming && filter && active.correction_pending && !active.correcting &&
        active.stop_reason == nullptr) {
      // Corrections asked for while the last write was in progress (or at the start).
      active.correction_pending = false;
      std::string events;
      if (!filter->correct(&events)) {
        co_return co_await end_with_relist(framer, feed, filter_relist_event(), kFilterRelist,
                                           result);
      }
      if (!events.empty()) {
        if (tap) tap->body(events);
        if (!co_await write_to_client(client_, framer.frame(events, false), streaming)) {
          shared_.metrics.streams_ended.with({"client_gone"}).inc();
          co_return finish(feed, false, "client_gone", result);
        }
      }
    }
    bool body_done = rp.is_done();
    std::string_view piece;  // what the client gets next
    if (!body_done) {
      res.body().data = buf;
      res.body().size = kRelayBufferBytes;
      boost::system::error_code ec;
      // A stream is written as each piece arrives; any other body fills the relay buffer first
      // (an apiserver may send one small TLS record per chunk, and a write per record is slow).
      do {
        if (!streaming)
          up_tcp.expires_after(kUpstreamIoTimeout);
        else if (info.is_watch())
          up_tcp.expires_at(stream_deadline);
        else
          up_tcp.expires_after(kLongRunningIdleTimeout);
        if (active.stop_reason != nullptr) {
          ec = asio::error::operation_aborted;
          break;
        }
        // Body bytes that came with the header (a small response's whole body) or with the last
        // read are taken first: an async read that needs no I/O still costs a trip through the
        // event loop before the client's write.
        const std::size_t room = res.body().size;
        ec = take_buffered_body(rp, up->buffer);
        if (!ec && res.body().size == room && !rp.is_done()) {
          active.in_upstream_read = streaming;
          auto [rec, rn] =
              co_await http::async_read_some(up->stream, up->buffer, rp, net::kNoThrow);
          active.in_upstream_read = false;
          co_await wait_for_correction_writer(*client_);
          ec = rec == http::error::need_buffer ? boost::system::error_code{} : rec;
          if (!ec) ec = take_buffered_body(rp, up->buffer);
        }
      } while (!ec && !streaming && !rp.is_done() && res.body().size > 0);
      if (ec) {
        const char* reason = active.stop_reason ? active.stop_reason
                                                : (ec == beast::error::timeout ? "upstream_timeout"
                                                                               : "upstream_closed");
        if (reason == std::string_view(kFilterRelist)) {
          co_return co_await end_with_relist(framer, feed, filter_relist_event(), kFilterRelist,
                                             result);
        }
        shared_.metrics.streams_ended.with({reason}).inc();
        if (!active.stop_reason) {
          shared_.metrics.upstream_errors
              .with({shared_.servers.address(up->server).url, "stream_broken"})
              .inc();
          if (shared_.health) shared_.health->probe_soon(up->server);
        }
        YH_LOG(Info) << kube::verb_name(info.verb) << " " << info.path << " for " << info.component
                     << " ended early: " << reason;
        // A stream the client can resume (a watch) ends cleanly; anything else is cut short so
        // the client cannot mistake a truncated body for a complete one.
        if (streaming && res.chunked() && std::string_view(reason) != "client_gone") {
          co_await end_chunked_stream(client_);
        }
        co_return finish(feed, false, reason, result);
      }
      body_done = rp.is_done();
      const std::string_view received{buf, kRelayBufferBytes - res.body().size};
      result.response_bytes += received.size();
      if (!feed.feed(received) || (body_done && !feed.finish())) {
        // Unfilterable: cut the response (no last chunk), so the client sees it is incomplete.
        shared_.metrics.streams_ended.with({"filter_error"}).inc();
        YH_LOG(Warning) << kube::verb_name(info.verb) << " " << info.path << " for "
                        << info.component << " cut short: " << feed.error();
        co_return finish(feed, false, "filter_error", result);
      }
      piece = filter ? std::string_view(feed.out()) : received;
      if (streaming && feed.failed() && !client_encoded && !body_done) {
        // The cache missed a write for this list: send what arrived, then make the client re-list.
        if (!co_await write_to_client(client_, framer.frame(piece, false), streaming)) break;
        co_return co_await end_with_relist(framer, feed, cache_relist_event(), "cache_relist",
                                           result);
      }
    } else {
      feed.out().clear();
      if (!feed.finish()) co_return finish(feed, false, "filter_error", result);
      if (filter) piece = feed.out();
    }
    if (piece.empty() && !body_done) continue;  // the filter holds the bytes so far
    if (!co_await write_to_client(client_, framer.frame(piece, body_done), streaming)) {
      if (streaming) shared_.metrics.streams_ended.with({"client_gone"}).inc();
      co_return finish(feed, false, "client_gone", result);
    }
    if (framer.done()) break;
  }
  feed.end(rp.is_done());
  stop_client_watch(*client_);
  result.keep_alive = keep_alive;
  // Bytes after the end of the response are a framing doubt (a response the hub did not ask
  // for): such a connection is closed, never reused for another client.
  if (upstream_keep_alive && rp.is_done() && active.stop_reason == nullptr &&
      up->buffer.size() == 0) {
    worker_.pool().release(std::move(up));
  }
  co_return result;
}

template <class Stream>
ForwardResult ResponseRelay<Stream>::finish(BodyTransform& feed, bool complete, const char* reason,
                                            ForwardResult result) {
  feed.end(complete);
  stop_client_watch(*client_);
  result.stream_end = reason;
  result.keep_alive = false;
  return result;
}

template <class Stream>
asio::awaitable<ForwardResult> ResponseRelay<Stream>::end_with_relist(net::BodyFramer& framer,
                                                                      BodyTransform& feed,
                                                                      std::string_view event,
                                                                      const char* reason,
                                                                      ForwardResult result) {
  shared_.metrics.streams_ended.with({reason}).inc();
  co_await write_to_client(client_, framer.frame(event, true),
                           true);  // the event, then the last chunk
  co_return finish(feed, false, reason, result);
}

template <class Stream>
asio::awaitable<ForwardResult> ResponseRelay<Stream>::tunnel(UpstreamConnectionPtr up,
                                                             ResponseParser& rp,
                                                             ForwardResult result) {
  const std::string head = net::message_head(rp.get());
  beast::get_lowest_layer(client_->stream).expires_after(kClientIoTimeout);
  auto [ec, n] = co_await asio::async_write(client_->stream, asio::buffer(head), net::kNoThrow);
  result.status = 101;
  result.keep_alive = false;
  if (ec) co_return result;
  client_->active.streaming = true;
  auto bytes = co_await net::tunnel_streams(client_->stream, client_->buffer, up->stream,
                                            up->buffer, kLongRunningIdleTimeout);
  result.request_bytes += bytes.client_to_upstream;
  result.response_bytes += bytes.upstream_to_client;
  co_return result;
}

template class ResponseRelay<net::PlainStream>;
template class ResponseRelay<net::TlsStream>;

}  // namespace yurthub::hub
