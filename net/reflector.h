// Reflector: one list+watch of a resource through the hub's own plain-HTTP proxy port (or, for the
// pool's shared cache on a follower, a leader hub's HTTPS multiplexer port), as
// client-go's tools/cache/reflector.go does it: list -> watch from the list's resourceVersion ->
// re-watch from the last one seen on a clean end, and after a backoff when the connection failed
// or broke (the hub was restarting, the link was lost); re-list on 410 Gone, and after a backoff
// on an answer that is not a watch's. What the objects become is its sink's business: the Informer
// (informer.h) keeps parsed objects for the hub's own readers, the pool's watch cache
// (pool/watch_cache.h) keeps their JSON for the node's clients.
//
// Runs on the executor given (worker 0); the sink is called there, never concurrently.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>

#include "base/result.h"
#include "net/source_stream.h"

namespace yurthub::net {

struct ReflectorOptions {
  std::string name;            // for logs, e.g. "yurt-hub-cfg"
  std::string path;            // collection path, e.g. "/api/v1/namespaces/kube-system/configmaps"
  std::string label_selector;  // sent as labelSelector (unescaped text)
  std::string field_selector;  // sent as fieldSelector (unescaped text)
  std::string proxy_host = "127.0.0.1";
  unsigned short proxy_port = 10261;
  std::string user_agent;  // e.g. "yurthub/0.1.0"
  // When set, asked before every request where to send it (else proxy_host:proxy_port). A
  // change of source between requests is seamless: a watch resumes from its resourceVersion.
  std::function<SourceAddress()> source;
  // Watches are re-opened with a random timeoutSeconds in [min, 2*min) (client-go's reflector
  // uses 5-10 min); failures back off from `backoff_initial` doubling up to `backoff_max`.
  std::chrono::seconds watch_timeout_min{300};
  std::chrono::milliseconds backoff_initial{500};
  std::chrono::milliseconds backoff_max{30000};
  // A list answered 404 (the resource's CRD is not installed; or, offline, never cached) counts
  // as a synced, empty list rather than a failure; the list is retried with the usual backoff,
  // capped at `missing_retry`.
  bool missing_is_empty = false;
  std::chrono::milliseconds missing_retry{60000};
  std::size_t max_list_bytes = std::size_t{64} << 20;
};

// What a watch event means for the loop.
enum class EventVerdict {
  Ok,      // applied (or ignored); go on
  Relist,  // an ERROR event with 410: the resourceVersion is too old
  Failed,  // the stream is not what a watch sends
};

// Called by the Reflector on its executor, one call at a time.
class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  // A list answered 200: its whole body. Sets *resource_version to the list's. An error makes the
  // loop back off and list again. On success events_done() follows, once synced() is true.
  virtual Status listed(std::string_view body, std::string* resource_version) = 0;
  // With missing_is_empty: the list was answered 404 (taken as an empty list).
  virtual void missing() {}
  // One whole watch event, as framed from the stream. Sets *resource_version when the event
  // carries one (a BOOKMARK too); sets *reason unless Ok.
  virtual EventVerdict event(std::string_view raw, std::string* resource_version,
                             std::string* reason) = 0;
  // The events of one piece read from the stream have all been given to event(); or a list was
  // applied.
  virtual void events_done() {}
  // A watch was established (HTTP 200); events follow.
  virtual void watching() {}
  // The loop has exited (after stop()); nothing is called after this.
  virtual void stopped() {}
};

class Reflector {
 public:
  Reflector(boost::asio::any_io_executor executor, ReflectorOptions options,
            std::shared_ptr<ReflectorSink> sink);
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Starts listing and watching; retries until stop(). Once only. Thread-safe.
  void start();
  // Ends the watch and stops retrying; the sink is never called again after stopped(). Runs at
  // once when called on the executor's thread, otherwise is dispatched to it.
  void stop();
  // Drops the connection in flight and sends the next request at once, to the source asked anew
  // (the source changed): a watch resumes from its resourceVersion. Thread-safe.
  void reconnect();
  // True when no loop is running: before start(), or once it has exited after stop().
  bool stopped() const;
  // True once a list has succeeded (or, with missing_is_empty, was answered 404).
  bool synced() const;
  // With missing_is_empty: the last list was answered 404.
  bool missing() const;
  // True once a first list has ended, listed or not (offline with nothing cached, say).
  bool tried() const;

 private:
  class State;  // everything the loop touches, owned by the loop too (reflector.cc)
  std::shared_ptr<State> state_;
};

}  // namespace yurthub::net
