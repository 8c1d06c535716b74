// Streaming an apiserver's response to the client; see response_relay.h.
//
// Bodies move through one fixed relay buffer with Beast's buffer_body (the "relay" pattern of
// Beast's HTTP examples): neither body is ever held whole, and a watch event reaches the client as
// soon as its chunk arrives.
#include "hub/response_relay.h"

#include <boost/algorithm/string/predicate.hpp>

#include "hub/client_stream.h"
#include "hub/gzip.h"
#include "hub/http_io.h"
#include "hub/log.h"
#include "hub/tunnel.h"

namespace yurthub::hub {
namespace net = boost::asio;
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
constexpr std::string_view kRelistEvent =
    R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
    R"("message":"the hub's cache of this list failed a write; list again","reason":"Expired","code":410}})"
    "\n";

}  // namespace

// Feeds one relayed piece to the cache's tap, decompressing it first when needed. A piece the
// tap cannot get (bad gzip) ends the tap as incomplete; the client is not affected.
class TapFeed {
 public:
  TapFeed(ResponseTap* tap, bool gzip) : tap_(tap) {
    if (tap_ && gzip) gzip_.emplace();
  }
  void feed(std::string_view bytes) {
    if (!tap_ || broken_) return;
    if (!gzip_) {
      tap_->body(bytes);
      return;
    }
    decoded_.clear();
    if (Status s = gzip_->feed(bytes, decoded_); !s) {
      YH_LOG(Warning) << "cache: cannot decompress a response: " << s.error().message;
      broken_ = true;
      return;
    }
    tap_->body(decoded_);
  }
  void end(bool complete) {
    if (tap_) tap_->end(complete && !broken_ && (!gzip_ || gzip_->done()));
  }
  bool failed() const { return tap_ && tap_->failed(); }

 private:
  ResponseTap* tap_;
  std::optional<GzipDecoder> gzip_;
  std::string decoded_;
  bool broken_ = false;
};

template <class Stream>
ResponseRelay<Stream>::ResponseRelay(std::shared_ptr<ClientConnection<Stream>> client, Worker& worker)
    : client_(std::move(client)), worker_(worker), shared_(worker.shared()) {}

template <class Stream>
net::awaitable<ForwardResult> ResponseRelay<Stream>::relay(UpstreamConnectionPtr up,
                                                           ResponseParser& rp,
                                                           const RequestInfo& info, bool keep_alive,
                                                           unsigned client_version,
                                                           ResponseTap* tap, ForwardResult result) {
  auto& res = rp.get();
  const bool upstream_keep_alive = rp.keep_alive();
  const bool streaming = info.is_long_running() && res.result() == http::status::ok;
  const bool encoded = res.find(http::field::content_encoding) != res.end();
  TapFeed feed(tap, boost::algorithm::iequals(std::string_view(res[http::field::content_encoding]), "gzip"));
  strip_hop_by_hop(res, false);
  keep_alive = keep_alive && !streaming && !shared_.draining;
  if (client_version < 11) {
    if (res.chunked()) res.chunked(false);  // an HTTP/1.0 client reads until the connection closes
    keep_alive = false;
  } else if (!rp.is_done() && !rp.chunked() && !rp.content_length()) {
    res.chunked(true);  // body delimited by the apiserver closing: re-frame so the client can reuse
  }
  res.version(client_version);
  res.keep_alive(keep_alive);
  result.status = res.result_int();

  ResponseSerializer rs{res};
  char* buf = client_->relay();
  auto& up_tcp = beast::get_lowest_layer(up->stream);
  // A watch ends by the apiserver's own timeout; this deadline only bounds a stream nobody ends.
  const auto stream_deadline =
      std::chrono::steady_clock::now() +
      (info.timeout_seconds ? std::chrono::seconds(*info.timeout_seconds + 60)
                            : 2 * shared_.options.min_request_timeout);
  if (streaming) {
    client_->active.streaming = true;
    // A drain or health change that happened while this request waited for its response header
    // found no stream to end; end it now rather than never.
    if (shared_.draining) client_->active.stop("hub_draining");
    if (!shared_.servers.healthy(up->server)) client_->active.stop("server_unhealthy");
    start_client_watch(client_);
    // The client must see the header at once, not with the first event (which may be minutes away).
    res.body().data = nullptr;
    res.body().size = 0;
    res.body().more = true;
    arm_write_watchdog(client_);
    auto [hec, hn] = co_await http::async_write_header(client_->stream, rs, kNoThrow);
    client_->write_watchdog.cancel();
    if (hec) client_->active.stop("client_gone");
    if (!hec && feed.failed() && !encoded) {
      // The cache of this list is stale: make the client re-list now, not at the next event.
      co_return co_await end_with_relist(rs, res, feed, result);
    }
  }

  for (;;) {
    if (!rp.is_done()) {
      res.body().data = buf;
      res.body().size = kRelayBufferBytes;
      boost::system::error_code ec;
      // A stream is written as each piece arrives; any other body fills the relay buffer first
      // (an apiserver may send one small TLS record per chunk, and a write per record is slow).
      do {
        if (!streaming) up_tcp.expires_after(kUpstreamIoTimeout);
        else if (info.is_watch()) up_tcp.expires_at(stream_deadline);
        else up_tcp.expires_after(kLongRunningIdleTimeout);
        if (client_->active.stop_reason != nullptr) {
          ec = net::error::operation_aborted;
          break;
        }
        auto [rec, rn] = co_await http::async_read_some(up->stream, up->buffer, rp, kNoThrow);
        ec = rec == http::error::need_buffer ? boost::system::error_code{} : rec;
        if (!ec) ec = take_buffered_body(rp, up->buffer);
      } while (!ec && !streaming && !rp.is_done() && res.body().size > 0);
      if (ec) {
        const char* reason = client_->active.stop_reason
                                 ? client_->active.stop_reason
                                 : (ec == beast::error::timeout ? "upstream_timeout" : "upstream_closed");
        shared_.metrics.streams_ended.with({reason}).inc();
        if (!client_->active.stop_reason) {
          shared_.metrics.upstream_errors.with({shared_.servers.address(up->server).url, "stream_broken"}).inc();
          if (shared_.health) shared_.health->probe_soon(up->server);
        }
        YH_LOG(Info) << info.verb << " " << info.path << " for " << info.component
                     << " ended early: " << reason;
        // A stream the client can resume (a watch) ends cleanly; anything else is cut short so
        // the client cannot mistake a truncated body for a complete one.
        if (streaming && res.chunked() && std::string_view(reason) != "client_gone") {
          co_await end_chunked_stream(client_);
        }
        feed.end(false);
        stop_client_watch(*client_);
        result.stream_end = reason;
        result.keep_alive = false;
        co_return result;
      }
      res.body().size = kRelayBufferBytes - res.body().size;
      // An empty piece must have no data pointer, or buffer_body emits the last chunk twice.
      res.body().data = res.body().size ? buf : nullptr;
      res.body().more = !rp.is_done();
      result.response_bytes += res.body().size;
      feed.feed({buf, res.body().size});
      if (streaming && feed.failed() && !encoded && res.body().more) {
        // The cache missed a write for this list: send what arrived, then make the client re-list.
        if (!co_await write_to_client(rs, streaming)) break;
        co_return co_await end_with_relist(rs, res, feed, result);
      }
    } else {
      res.body().data = nullptr;
      res.body().size = 0;
      res.body().more = false;
    }
    if (!co_await write_to_client(rs, streaming)) {
      if (streaming) shared_.metrics.streams_ended.with({"client_gone"}).inc();
      feed.end(false);
      stop_client_watch(*client_);
      result.stream_end = "client_gone";
      result.keep_alive = false;
      co_return result;
    }
    if (rs.is_done()) break;
  }
  feed.end(rp.is_done());
  stop_client_watch(*client_);
  result.keep_alive = keep_alive;
  if (upstream_keep_alive && rp.is_done() && client_->active.stop_reason == nullptr) {
    worker_.pool().release(std::move(up));
  }
  co_return result;
}

template <class Stream>
net::awaitable<bool> ResponseRelay<Stream>::write_to_client(ResponseSerializer& rs, bool streaming) {
  if (streaming) arm_write_watchdog(client_);
  else beast::get_lowest_layer(client_->stream).expires_after(kClientIoTimeout);
  auto [ec, n] = co_await http::async_write(client_->stream, rs, kNoThrow);
  if (streaming) client_->write_watchdog.cancel();
  co_return !ec || ec == http::error::need_buffer;
}

template <class Stream>
net::awaitable<ForwardResult> ResponseRelay<Stream>::end_with_relist(
    ResponseSerializer& rs, http::response<http::buffer_body>& res, TapFeed& feed,
    ForwardResult result) {
  auto& body = res.body();
  body.data = const_cast<char*>(kRelistEvent.data());
  body.size = kRelistEvent.size();
  body.more = false;  // the event, then the last chunk
  shared_.metrics.streams_ended.with({"cache_relist"}).inc();
  co_await write_to_client(rs, true);
  feed.end(false);
  stop_client_watch(*client_);
  result.stream_end = "cache_relist";
  result.keep_alive = false;
  co_return result;
}

template <class Stream>
net::awaitable<ForwardResult> ResponseRelay<Stream>::tunnel(UpstreamConnectionPtr up,
                                                            ResponseParser& rp,
                                                            ForwardResult result) {
  auto& res = rp.get();
  res.body().data = nullptr;
  res.body().size = 0;
  res.body().more = false;
  ResponseSerializer rs{res};
  beast::get_lowest_layer(client_->stream).expires_after(kClientIoTimeout);
  auto [ec, n] = co_await http::async_write_header(client_->stream, rs, kNoThrow);
  result.status = 101;
  result.keep_alive = false;
  if (ec) co_return result;
  client_->active.streaming = true;
  auto bytes = co_await tunnel_streams(client_->stream, client_->buffer, up->stream, up->buffer,
                                       kLongRunningIdleTimeout);
  result.request_bytes += bytes.client_to_upstream;
  result.response_bytes += bytes.upstream_to_client;
  co_return result;
}

template class ResponseRelay<PlainStream>;
template class ResponseRelay<TlsStream>;

}  // namespace yurthub::hub
