// ClientConnection: the state of one client connection that outlives any single coroutine: the
// stream, its read buffer, the relay buffer, and what is being relayed right now (ActiveUpstream),
// so a worker can end a stream from outside. Shared (shared_ptr) by the session loop, the
// forwarder and the client watcher that notices a client leaving mid-stream. Worker-thread only.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <boost/beast/core/flat_buffer.hpp>

#include "hub/hooks/cache_hooks.h"
#include "hub/hooks/filter_hooks.h"
#include "hub/hooks/stream_end.h"
#include "hub/upstream_pool.h"
#include "net/header_arena.h"
#include "net/streams.h"
#include "net/timer.h"

namespace yurthub::hub {

class BodyTransform;  // hub/body_transform.h

inline constexpr std::size_t kMaxRequestHeaderBytes = 64 * 1024;
inline constexpr std::size_t kMaxRequestBodyBytes = 8 * 1024 * 1024;
inline constexpr std::size_t kMaxResponseHeaderBytes = 1024 * 1024;
inline constexpr std::size_t kRelayBufferBytes = 32 * 1024;
inline constexpr std::chrono::seconds kClientIdleTimeout{90};
inline constexpr std::chrono::seconds kClientIoTimeout{30};
inline constexpr std::chrono::seconds kUpstreamIoTimeout{60};
inline constexpr std::chrono::seconds kUpstreamResponseTimeout{75};  // apiserver's 60 s + margin
inline constexpr std::chrono::hours kLongRunningIdleTimeout{4};      // exec, attach, logs -f

// The exchange in progress on a client connection: relayed from an apiserver, or answered by the
// cache while offline.
struct ActiveUpstream {
  // The upstream connection's stream while an upstream exchange is in progress, and how stop()
  // cancels what waits on it (ActiveScope sets both, for the stream's type).
  void* upstream = nullptr;
  void (*cancel_upstream)(void* upstream) = nullptr;
  std::size_t server = 0;
  bool streaming = false;  // relaying a watch or another long-running response
  bool offline = false;    // answered by the cache (no upstream connection)
  bool shared = false;     // answered by the pool's shared watch cache: no server's health ends it
  std::optional<StreamEnd> stop_reason;  // set by stop(); the relay ends and reports it
  net::Timer* wake = nullptr;            // what an offline stream waits on

  // A filtered watch being relayed (see watch_corrections.h). The relay owns both objects and
  // outlives every use of them here; corrections are asked of `body` (BodyTransform::correct),
  // which hands them to the cache's tap too. Both are set together.
  ResponseFilter* filter = nullptr;
  BodyTransform* body = nullptr;
  bool chunked = false;             // the client's response is chunked (else close-delimited)
  bool in_upstream_read = false;    // the relay waits for the apiserver; the client is idle
  bool correcting = false;          // a correction is being written to the client
  bool correction_pending = false;  // the relay must correct after its current write

  // Ends the exchange from outside: records why and aborts whatever it is waiting on.
  void stop(StreamEnd reason) {
    if (!stop_reason) stop_reason = reason;
    if (upstream != nullptr) cancel_upstream(upstream);
    if (wake != nullptr) wake->cancel();
  }
};

// An exchange's registration on its client connection, cleared however the exchange ends. Used by
// the Forwarder (forwarder_impl.h, forwarder_offline_impl.h) and the relay's tests. `Upstream`: an
// UpstreamConnection, or a test's in-memory one (a `stream` member net::cancel_socket takes).
struct ActiveScope {
  ActiveUpstream& active;
  ActiveScope(ActiveUpstream& a, std::nullptr_t, std::size_t server) : active(a) {
    active = ActiveUpstream{};
    active.server = server;
  }
  template <class Upstream>
  ActiveScope(ActiveUpstream& a, Upstream* c, std::size_t server)
      : ActiveScope(a, nullptr, server) {
    if (c == nullptr) return;
    active.upstream = c;
    active.cancel_upstream = [](void* up) {
      net::cancel_socket(static_cast<Upstream*>(up)->stream);
    };
  }
  ~ActiveScope() { active = ActiveUpstream{}; }
  ActiveScope(const ActiveScope&) = delete;
  ActiveScope& operator=(const ActiveScope&) = delete;
};

template <class Stream>
struct ClientConnection {
  template <class... Args>
  explicit ClientConnection(const boost::asio::any_io_executor& executor, Args&&... stream_args)
      : stream(std::forward<Args>(stream_args)...),
        buffer(kMaxRequestHeaderBytes + 16 * 1024),
        write_watchdog(executor),
        wake_timer(executor) {}

  Stream stream;
  boost::beast::flat_buffer buffer;      // bytes read from the client and not yet parsed
  std::unique_ptr<char[]> relay_buffer;  // allocated on first use, kRelayBufferBytes
  ActiveUpstream active;
  // The fields of the request being served (ProxySession) and of the apiserver's response to it
  // (Forwarder), one message head at a time each.
  net::HeaderArena request_arena;
  net::HeaderArena response_arena;
  // The wire form of those heads and the chunk size lines after them (net::BodyFramer): the
  // request sent on (RequestBody) and the response sent back (ResponseRelay or
  // ClientResponseWriter, one per request), reused from one request to the next.
  std::string request_head;
  std::string response_head;
  net::Timer write_watchdog;     // bounds client writes while streaming
  net::Timer wake_timer;         // an offline watch waits on it (ActiveUpstream::wake)
  bool watching_client = false;  // a client watcher coroutine is running
  bool closed = false;

  char* relay() {
    if (!relay_buffer) relay_buffer.reset(new char[kRelayBufferBytes]);
    return relay_buffer.get();
  }
};

}  // namespace yurthub::hub
