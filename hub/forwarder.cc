// Forwarding one request to an apiserver and relaying the response; see forwarder.h.
//
// The request and response are relayed with Beast's buffer_body (the "relay" pattern of Beast's
// HTTP examples): the header is parsed once, then body bytes move through one fixed buffer in
// pieces, so neither body is ever held whole and a watch event reaches the client as soon as its
// chunk arrives.
#include "hub/forwarder.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/write.hpp>

#include "hub/http_io.h"
#include "hub/log.h"
#include "hub/tunnel.h"

namespace yurthub::hub {
namespace net = boost::asio;
namespace beast = boost::beast;

namespace {

bool carries_bearer_token(const http::fields& fields) {
  auto it = fields.find(http::field::authorization);
  if (it == fields.end()) return false;
  std::string_view value = it->value();
  return value.size() > 7 && (value.substr(0, 7) == "Bearer " || value.substr(0, 7) == "bearer ");
}

// How long the apiserver may take to send the response header: its own request timeout (60 s,
// or the client's `timeout`/`timeoutSeconds`) plus a margin.
std::chrono::seconds response_header_timeout(const RequestInfo& info) {
  if (info.timeout_seconds && *info.timeout_seconds > 0 && !info.is_watch()) {
    return std::chrono::seconds(*info.timeout_seconds + 15);
  }
  return kUpstreamResponseTimeout;
}

// Errors reading from a client while relaying its request body.
std::optional<Failure> client_body_failure(const boost::system::error_code& ec) {
  if (ec == http::error::body_limit) return Failure::BodyTooLarge;
  if (ec.category() == http::make_error_code(http::error::bad_chunk).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message) {
    return Failure::BadRequest;
  }
  return std::nullopt;  // the client went away or timed out: nobody to answer
}

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

// An exchange's registration on its client connection, cleared however the exchange ends.
struct ActiveScope {
  ActiveUpstream& active;
  ActiveScope(ActiveUpstream& a, UpstreamConnection* c, std::size_t server) : active(a) {
    active = ActiveUpstream{c, server, false, nullptr};
  }
  ~ActiveScope() { active = ActiveUpstream{}; }
};

template <class Stream>
net::awaitable<void> watch_client(std::shared_ptr<ClientConnection<Stream>> client) {
  // While a response streams, the client sends nothing (Go clients never pipeline), so a read
  // completing means it left: end the upstream request instead of waiting for the next event.
  char sink[512];
  for (;;) {
    auto [ec, n] = co_await client->stream.async_read_some(net::buffer(sink), kNoThrow);
    if (!client->watching_client) co_return;
    if (ec) {
      client->active.stop("client_gone");
      co_return;
    }
  }
}

}  // namespace

template <class Stream>
Forwarder<Stream>::Forwarder(std::shared_ptr<ClientConnection<Stream>> client, Worker& worker)
    : client_(std::move(client)), worker_(worker), shared_(worker.shared()) {}

template <class Stream>
void Forwarder<Stream>::upstream_failed(std::size_t server, const char* kind) {
  shared_.metrics.upstream_errors.with({shared_.servers.address(server).url, kind}).inc();
  if (shared_.health) shared_.health->probe_soon(server);
}

template <class Stream>
net::awaitable<ForwardResult> Forwarder<Stream>::forward(RequestParser& parser,
                                                         const RequestInfo& info,
                                                         bool client_keep_alive) {
  auto& req = parser.get();
  client_version_ = req.version();
  const bool upgrade = is_upgrade_request(req);
  const bool has_body = parser.chunked() || parser.content_length().value_or(0) > 0;
  const Identity identity = carries_bearer_token(req) ? Identity::Bearer : Identity::Hub;
  strip_hop_by_hop(req, upgrade);
  req.version(11);
  if (identity == Identity::Hub && !shared_.tls.hub_token.empty() &&
      req.find(http::field::authorization) == req.end()) {
    req.set(http::field::authorization, "Bearer " + shared_.tls.hub_token);
  }

  ForwardResult result;
  std::vector<bool> tried(shared_.servers.size());
  std::string last_error;
  bool fresh_retry_used = false;
  for (;;) {
    auto server = shared_.servers.pick(tried);
    if (!server) {
      if (last_error.empty()) {
        co_return co_await fail(Failure::NoHealthyServer, "every apiserver is unhealthy", parser,
                                client_keep_alive, result);
      }
      co_return co_await fail(Failure::UpstreamUnreachable, last_error, parser, client_keep_alive,
                              result);
    }
    const ServerAddress& address = shared_.servers.address(*server);
    auto acquired = co_await worker_.pool().acquire(*server, identity);
    if (!acquired) {
      // Nothing was sent: trying another healthy server is safe for any method.
      upstream_failed(*server, "connect");
      YH_LOG(Warning) << acquired.error().message;
      tried[*server] = true;
      last_error = acquired.error().message;
      continue;
    }
    UpstreamConnectionPtr up = std::move(*acquired);
    req.set(http::field::host, address.host.find(':') == std::string::npos
                                   ? address.host + ":" + address.port
                                   : "[" + address.host + "]:" + address.port);
    ActiveScope scope(client_->active, up.get(), *server);

    bool client_failed = false;
    const bool sent = co_await send_request(*up, parser, result, client_failed);
    if (!sent && client_failed) {
      if (result.failure) {
        co_return co_await fail(*result.failure, "while reading the request body", parser, false,
                                result);
      }
      result.keep_alive = false;
      co_return result;
    }

    ResponseParser rp;
    rp.header_limit(kMaxResponseHeaderBytes);
    rp.body_limit(boost::none);
    if (req.method() == http::verb::head) rp.skip(true);
    boost::system::error_code ec;
    if (sent) {
      beast::get_lowest_layer(up->stream).expires_after(response_header_timeout(info));
      auto [rec, rn] = co_await http::async_read_header(up->stream, up->buffer, rp, kNoThrow);
      ec = rec;
    }
    if (!sent || ec) {
      // A pooled connection the apiserver had closed: retry once on a fresh one if the request
      // had no body (nothing is lost by sending it again).
      if (up->reused && !has_body && !fresh_retry_used && ec != beast::error::timeout) {
        fresh_retry_used = true;
        continue;
      }
      if (ec == beast::error::timeout) {
        upstream_failed(*server, "timeout");
        co_return co_await fail(Failure::UpstreamTimeout, address.url, parser, false, result);
      }
      if (ec && ec.category() == http::make_error_code(http::error::bad_version).category() &&
          ec != http::error::end_of_stream && ec != http::error::partial_message) {
        upstream_failed(*server, "bad_response");
        co_return co_await fail(Failure::BadUpstreamResponse, address.url + ": " + ec.message(),
                                parser, false, result);
      }
      upstream_failed(*server, "closed");
      co_return co_await fail(Failure::UpstreamClosed, address.url, parser, false, result);
    }
    if (upgrade && rp.get().result() == http::status::switching_protocols) {
      co_return co_await tunnel(std::move(up), rp, result);
    }
    co_return co_await relay_response(std::move(up), rp, parser, info, client_keep_alive, result);
  }
}

template <class Stream>
net::awaitable<bool> Forwarder<Stream>::send_request(UpstreamConnection& up, RequestParser& parser,
                                                     ForwardResult& result, bool& client_failed) {
  auto& req = parser.get();
  http::request_serializer<http::buffer_body> sr{req};
  char* buf = client_->relay();
  do {
    if (!parser.is_done()) {
      req.body().data = buf;
      req.body().size = kRelayBufferBytes;
      beast::get_lowest_layer(client_->stream).expires_after(kClientIoTimeout);
      auto [rec, rn] = co_await http::async_read_some(client_->stream, client_->buffer, parser, kNoThrow);
      if (rec == http::error::need_buffer) rec = {};
      if (!rec) rec = take_buffered_body(parser, client_->buffer);
      if (rec) {
        client_failed = true;
        result.failure = client_body_failure(rec);
        co_return false;
      }
      req.body().size = kRelayBufferBytes - req.body().size;
      // An empty piece must have no data pointer, or buffer_body emits the last chunk twice.
      req.body().data = req.body().size ? buf : nullptr;
      req.body().more = !parser.is_done();
      result.request_bytes += req.body().size;
    } else {
      req.body().data = nullptr;
      req.body().size = 0;
      req.body().more = false;
    }
    beast::get_lowest_layer(up.stream).expires_after(kClientIoTimeout);
    auto [wec, wn] = co_await http::async_write(up.stream, sr, kNoThrow);
    if (wec == http::error::need_buffer) wec = {};
    if (wec) co_return false;
  } while (!sr.is_done());
  co_return true;
}

template <class Stream>
net::awaitable<ForwardResult> Forwarder<Stream>::relay_response(UpstreamConnectionPtr up,
                                                                ResponseParser& rp,
                                                                RequestParser& parser,
                                                                const RequestInfo& info,
                                                                bool keep_alive,
                                                                ForwardResult result) {
  auto& res = rp.get();
  const bool upstream_keep_alive = rp.keep_alive();
  const bool streaming = info.is_long_running() && res.result() == http::status::ok;
  strip_hop_by_hop(res, false);
  keep_alive = keep_alive && parser.is_done() && !streaming && !shared_.draining;
  if (client_version_ < 11) {
    if (res.chunked()) res.chunked(false);  // an HTTP/1.0 client reads until the connection closes
    keep_alive = false;
  } else if (!rp.is_done() && !rp.chunked() && !rp.content_length()) {
    res.chunked(true);  // body delimited by the apiserver closing: re-frame so the client can reuse
  }
  res.version(client_version_);
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
    start_client_watch();
    // The client must see the header at once, not with the first event (which may be minutes away).
    res.body().data = nullptr;
    res.body().size = 0;
    res.body().more = true;
    arm_write_watchdog();
    auto [hec, hn] = co_await http::async_write_header(client_->stream, rs, kNoThrow);
    client_->write_watchdog.cancel();
    if (hec) client_->active.stop("client_gone");
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
        if (!client_->active.stop_reason) upstream_failed(up->server, "stream_broken");
        YH_LOG(Info) << info.verb << " " << info.path << " for " << info.component
                     << " ended early: " << reason;
        // A stream the client can resume (a watch) ends cleanly; anything else is cut short so
        // the client cannot mistake a truncated body for a complete one.
        if (streaming && res.chunked() && std::string_view(reason) != "client_gone") {
          co_await end_chunked_stream();
        }
        stop_client_watch();
        result.stream_end = reason;
        result.keep_alive = false;
        co_return result;
      }
      res.body().size = kRelayBufferBytes - res.body().size;
      res.body().data = res.body().size ? buf : nullptr;  // see send_request
      res.body().more = !rp.is_done();
      result.response_bytes += res.body().size;
    } else {
      res.body().data = nullptr;
      res.body().size = 0;
      res.body().more = false;
    }
    if (!co_await write_to_client(rs, streaming)) {
      if (streaming) shared_.metrics.streams_ended.with({"client_gone"}).inc();
      stop_client_watch();
      result.stream_end = "client_gone";
      result.keep_alive = false;
      co_return result;
    }
    if (rs.is_done()) break;
  }
  stop_client_watch();
  result.keep_alive = keep_alive;
  if (upstream_keep_alive && rp.is_done() && client_->active.stop_reason == nullptr) {
    worker_.pool().release(std::move(up));
  }
  co_return result;
}

template <class Stream>
net::awaitable<bool> Forwarder<Stream>::write_to_client(ResponseSerializer& rs, bool streaming) {
  if (streaming) arm_write_watchdog();
  else beast::get_lowest_layer(client_->stream).expires_after(kClientIoTimeout);
  auto [ec, n] = co_await http::async_write(client_->stream, rs, kNoThrow);
  if (streaming) client_->write_watchdog.cancel();
  co_return !ec || ec == http::error::need_buffer;
}

template <class Stream>
void Forwarder<Stream>::arm_write_watchdog() {
  // While streaming, a client watcher read is pending on the same stream, so the tcp_stream's own
  // timer cannot bound the write; a separate timer cancels the socket if a write stalls.
  client_->write_watchdog.expires_after(kClientIoTimeout);
  client_->write_watchdog.async_wait(
      [weak = std::weak_ptr<ClientConnection<Stream>>(client_)](boost::system::error_code ec) {
        if (ec) return;
        if (auto c = weak.lock()) cancel_socket(c->stream);
      });
}

template <class Stream>
net::awaitable<void> Forwarder<Stream>::end_chunked_stream() {
  static constexpr char kLastChunk[] = "0\r\n\r\n";
  arm_write_watchdog();
  co_await net::async_write(client_->stream, net::buffer(kLastChunk, sizeof kLastChunk - 1), kNoThrow);
  client_->write_watchdog.cancel();
}

template <class Stream>
void Forwarder<Stream>::start_client_watch() {
  beast::get_lowest_layer(client_->stream).expires_never();
  client_->watching_client = true;
  net::co_spawn(worker_.io(), watch_client(client_), net::detached);
}

template <class Stream>
void Forwarder<Stream>::stop_client_watch() {
  if (!client_->watching_client) return;
  client_->watching_client = false;
  cancel_socket(client_->stream);  // wakes the watcher's pending read; the connection then closes
}

template <class Stream>
net::awaitable<ForwardResult> Forwarder<Stream>::tunnel(UpstreamConnectionPtr up,
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

template <class Stream>
net::awaitable<ForwardResult> Forwarder<Stream>::fail(Failure failure, const std::string& detail,
                                                      RequestParser& parser, bool keep_alive,
                                                      ForwardResult result) {
  const ApiError error = api_error(failure, detail);
  // A request whose body was not read to the end leaves the connection unusable.
  keep_alive = keep_alive && parser.is_done() && !shared_.draining;
  beast::get_lowest_layer(client_->stream).expires_after(kClientIoTimeout);
  const bool written = co_await write_api_error(client_->stream, client_version_, keep_alive, error);
  result.failure = failure;
  result.status = written ? error.code : 0;
  result.keep_alive = written && keep_alive;
  co_return result;
}

template class Forwarder<PlainStream>;
template class Forwarder<TlsStream>;

}  // namespace yurthub::hub
