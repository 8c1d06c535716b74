// Serves one watch request as a chunked HTTP stream (one JSON event + "\n" per chunk, flushed at
// once; pods-watch.raw-http1): initial events, then live ones from the Store, BOOKMARKs when asked
// for, an ERROR event with a 410 Status for a too-old resourceVersion, a clean end after
// timeoutSeconds or at server shutdown. A watcher that overflows its queue (the client stopped
// reading) has its connection dropped; a client that hangs up ends the watch at once.
// Runs on the connection's coroutine; single-threaded with the Store.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>

#include <boost/asio/awaitable.hpp>

#include "test/fake_apiserver/api_handlers.h"
#include "test/fake_apiserver/http_io.h"
#include "test/fake_apiserver/store.h"
#include "test/fake_apiserver/watch_options.h"
#include "test/fake_apiserver/watcher.h"

namespace yurthub::fake {

struct WatchConfig {
  std::chrono::milliseconds bookmark_interval{60000};
  std::size_t max_queue = 10000;
  bool watch_list = true;  // streaming lists as with WatchList enabled; false: as v1.26 (422)
};

// A validated watch request.
struct WatchPlan {
  WatchFilter filter;
  std::optional<std::uint64_t> from_rv;  // nullopt: "" or "0"
  bool bookmarks = false;
  std::optional<std::chrono::seconds> timeout;
  // sendInitialEvents (watch_options.h): true, the current objects as ADDED whatever from_rv,
  // then (with bookmarks) the BOOKMARK that ends them; false, no initial events even from "".
  std::optional<bool> send_initial_events;
};

// Validates selectors, resourceVersion, timeoutSeconds (a 400 Status reply on error) and the
// streaming-list options (a 422, watch_options.h).
std::variant<WatchPlan, Reply> plan_watch(const ApiRequest& req, const WatchConfig& config);

// The BOOKMARK event line for `kind`/`api_version` at `rv`, with trailing "\n".
std::string bookmark_event(std::string_view kind, std::string_view api_version, std::uint64_t rv);
// The BOOKMARK that ends a streaming list's initial events at `rv`, as kube-apiserver 1.34+ writes
// it: the kind's empty object with metadata.annotations `k8s.io/initial-events-end: "true"`.
std::string initial_events_end_event(std::string_view kind, std::string_view api_version,
                                     std::uint64_t rv);
// `{"type":T,"object":<object with kind/apiVersion>}` + "\n".
std::string watch_event(const WatchItem& item, std::string_view kind, std::string_view api_version);

// Streams the watch. Returns true if the connection may serve another request (the response was
// ended with its terminating chunk and the client did not hang up).
boost::asio::awaitable<bool> serve_watch(TlsStream& stream, Store& store, const ApiRequest& req,
                                         WatchPlan plan, const WatchConfig& config,
                                         bool keep_alive);

}  // namespace yurthub::fake
