// ClientConnection: the state of one client connection that outlives any single coroutine: the
// stream, its read buffer, the relay buffer, and what is being relayed right now (ActiveExchange),
// so a worker can end a stream from outside. Shared (shared_ptr) by the session loop, the
// forwarder and the client watcher that notices a client leaving mid-stream. Worker-thread only.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <boost/beast/core/flat_buffer.hpp>

#include "hub/active_exchange.h"
#include "hub/hooks/cache_hooks.h"
#include "hub/hooks/filter_hooks.h"
#include "hub/hooks/stream_end.h"
#include "hub/upstream_pool.h"
#include "net/header_arena.h"
#include "net/streams.h"
#include "net/timer.h"

namespace yurthub::hub {

inline constexpr std::size_t kMaxRequestHeaderBytes = 64 * 1024;
inline constexpr std::size_t kMaxRequestBodyBytes = 8 * 1024 * 1024;
inline constexpr std::size_t kMaxResponseHeaderBytes = 1024 * 1024;
inline constexpr std::size_t kRelayBufferBytes = 32 * 1024;
inline constexpr std::chrono::seconds kClientIdleTimeout{90};
inline constexpr std::chrono::seconds kClientIoTimeout{30};
inline constexpr std::chrono::seconds kUpstreamIoTimeout{60};
inline constexpr std::chrono::seconds kUpstreamResponseTimeout{75};  // apiserver's 60 s + margin
inline constexpr std::chrono::hours kLongRunningIdleTimeout{4};      // exec, attach, logs -f

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
  ActiveExchange active;
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
  net::Timer wake_timer;         // a local watch waits on it (ActiveExchange::local_stream)
  bool watching_client = false;  // a client watcher coroutine is running
  bool closed = false;

  char* relay() {
    if (!relay_buffer) relay_buffer.reset(new char[kRelayBufferBytes]);
    return relay_buffer.get();
  }
};

}  // namespace yurthub::hub
