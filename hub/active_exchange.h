// ActiveExchange: the exchange in progress on a client connection (relayed from an apiserver, or
// answered locally by the node's or the pool's cache), as the rest of the worker sees it: who
// serves it, whether it streams, why it was ended from outside, and where a filtered watch stands
// with its corrections. Each of those is decided here, once: whether a server's health or the
// hub's drain ends the stream, and which way a correction reaches the client.
// Owned by ClientConnection (hub/client_connection.h). Registered by ActiveScope (the Forwarder),
// marked streaming by the ResponseRelay and the ClientResponseWriter, ended by the ProxySession
// and the client watcher, corrected through watch_corrections.h and FilteringWriter.
// Worker-thread only.
#pragma once

#include <cstddef>
#include <optional>

#include "hub/hooks/filter_hooks.h"
#include "hub/hooks/stream_end.h"
#include "net/streams.h"
#include "net/timer.h"

namespace yurthub::hub {

class BodyTransform;  // hub/body_transform.h

class ActiveExchange {
 public:
  // ---- Who serves it (ActiveScope) ----

  // A new exchange, served by `server` (0 for a local answer), with no upstream yet.
  void begin(std::size_t server) {
    *this = ActiveExchange{};
    server_ = server;
  }
  // The upstream connection the exchange waits on; stop() cancels what waits on its stream.
  // `Upstream`: an UpstreamConnection, or a test's in-memory one (a `stream` member
  // net::cancel_socket takes).
  template <class Upstream>
  void attach_upstream(Upstream* upstream) {
    upstream_ = upstream;
    cancel_upstream_ = [](void* up) { net::cancel_socket(static_cast<Upstream*>(up)->stream); };
  }
  // The exchange is over, however it ended.
  void clear() { *this = ActiveExchange{}; }

  // ---- Streams ----

  // A relayed response streams to the client (a watch or a tunnel). A filtered watch passes its
  // filter and body (see watch_corrections.h): both outlive the stream, and `chunked` says how
  // the client's response is framed (else close-delimited).
  void relaying_stream(ResponseFilter* filter = nullptr, BodyTransform* body = nullptr,
                       bool chunked = false) {
    streaming_ = true;
    filter_ = filter;
    body_ = body;
    chunked_ = chunked;
  }
  // A local answer streams (a watch served by a cache); it waits on `wake`, which stop() and a
  // correction cancel. nullptr when the stream is over.
  void local_stream(net::Timer* wake) {
    streaming_ = true;
    local_ = true;
    wake_ = wake;
  }
  // The local answer comes from the pool's shared watch cache: no server's health ends it.
  void from_shared_cache() { shared_ = true; }
  // The filter a local watch is served through (FilteringWriter), or nullptr when it is done.
  void local_filter(ResponseFilter* filter) { filter_ = filter; }
  bool streaming() const { return streaming_; }

  // ---- Ending it from outside ----

  // Records why (the first reason wins) and aborts whatever the exchange waits on.
  void stop(StreamEnd reason) {
    if (!stop_reason_) stop_reason_ = reason;
    if (upstream_ != nullptr) cancel_upstream_(upstream_);
    if (wake_ != nullptr) wake_->cancel();
  }
  // Why stop() was called, if it was.
  const std::optional<StreamEnd>& stopped() const { return stop_reason_; }
  // The one place a server's health ends a stream: a relayed stream when its server turns
  // unhealthy; an offline one (the node's cache) when any server is healthy again, so that the
  // client re-watches through the apiserver.
  void server_health_changed(std::size_t server, bool healthy) {
    if (!streaming_) return;
    if (!healthy && upstream_ != nullptr && server_ == server) {
      stop(StreamEnd::ServerUnhealthy);
    } else if (healthy && local_ && !shared_) {
      stop(StreamEnd::ServerHealthy);
    }
  }
  // The hub drains: a stream ends now; a short request finishes (its response closes).
  void hub_draining() {
    if (streaming_) stop(StreamEnd::HubDraining);
  }

  // ---- Corrections of a filtered watch (watch_corrections.h) ----

  // How a correction the filters asked for reaches the client.
  enum class CorrectionRoute {
    None,         // no reactive filtered watch here, or it is ending
    WakeLocal,    // a local answer: its writer corrects when its wait wakes
    SpawnWriter,  // the relay waits for the apiserver: a correction writer writes at once
    AfterWrite,   // the relay is writing (or a writer runs): corrected after that write
  };
  // The filters' inputs changed: records the correction as pending and says how it goes out.
  // SpawnWriter means the caller must start the writer (it is marked running).
  CorrectionRoute request_correction() {
    if (!streaming_ || filter_ == nullptr || !filter_->reactive() || stop_reason_) {
      return CorrectionRoute::None;
    }
    correction_pending_ = true;
    if (local_) {
      if (wake_ != nullptr) wake_->cancel();
      return CorrectionRoute::WakeLocal;
    }
    if (!in_upstream_read_ || correcting_) return CorrectionRoute::AfterWrite;
    correcting_ = true;
    return CorrectionRoute::SpawnWriter;
  }
  // A reactive watch starts with a correction pending.
  void correction_at_start() { correction_pending_ = true; }
  // A correction is pending and no writer is running: the caller sends it now (and the pending
  // mark is taken).
  bool take_correction() {
    if (!correction_pending_ || correcting_ || stop_reason_) return false;
    correction_pending_ = false;
    return true;
  }
  // The correction writer's loop: takes the next pending correction while the watch goes on.
  bool writer_takes_correction() {
    if (!correction_pending_ || stop_reason_ || filter_ == nullptr) return false;
    correction_pending_ = false;
    return true;
  }
  void correction_writer_done() { correcting_ = false; }
  bool correction_writer_running() const { return correcting_; }
  // The relay waits for the apiserver (the client side is idle), or not.
  void upstream_read(bool waiting) { in_upstream_read_ = waiting; }
  BodyTransform* body() const { return body_; }
  bool chunked() const { return chunked_; }

 private:
  void* upstream_ = nullptr;
  void (*cancel_upstream_)(void* upstream) = nullptr;
  std::size_t server_ = 0;
  bool streaming_ = false;
  bool local_ = false;   // answered by a cache (no upstream connection)
  bool shared_ = false;  // by the pool's shared watch cache
  std::optional<StreamEnd> stop_reason_;
  net::Timer* wake_ = nullptr;
  ResponseFilter* filter_ = nullptr;
  BodyTransform* body_ = nullptr;
  bool chunked_ = false;
  bool in_upstream_read_ = false;
  bool correcting_ = false;  // a correction writer is running
  bool correction_pending_ = false;
};

// An exchange's registration on its client connection, cleared however the exchange ends. Used by
// the Forwarder (forwarder_impl.h, forwarder_offline_impl.h) and the relay's tests.
class ActiveScope {
 public:
  ActiveScope(ActiveExchange& active, std::nullptr_t, std::size_t server) : active_(active) {
    active_.begin(server);
  }
  template <class Upstream>
  ActiveScope(ActiveExchange& active, Upstream* upstream, std::size_t server)
      : ActiveScope(active, nullptr, server) {
    if (upstream != nullptr) active_.attach_upstream(upstream);
  }
  ~ActiveScope() { active_.clear(); }
  ActiveScope(const ActiveScope&) = delete;
  ActiveScope& operator=(const ActiveScope&) = delete;

 private:
  ActiveExchange& active_;
};

}  // namespace yurthub::hub
