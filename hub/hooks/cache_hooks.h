// The hub's extension points for the node cache (cache/ implements them; the hub knows nothing of
// LMDB or cache policy, and the cache knows nothing of streams and sockets):
//
//   CacheHooks     asked by the Forwarder for every request: is its response to be cached (then
//                  the hub asks the apiserver for JSON), and can it be answered locally when no
//                  apiserver can be reached.
//   ResponseTap    fed the body of one cacheable response as it is relayed to the client.
//   ResponseWriter how a locally answered response reaches the client (type-erased over the
//                  plain and TLS client streams).
//
// Threading: CacheHooks is called from every worker thread and must be thread-safe. A tap or a
// writer belongs to one request on one worker thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "hub/hooks/stream_end.h"
#include "kube/request_info.h"

namespace yurthub::base {
class ListSink;  // base/json_frames.h
}  // namespace yurthub::base

namespace yurthub::hub {

class ResponseTap {
 public:
  virtual ~ResponseTap() = default;
  // Gets and lists: body bytes as relayed (de-chunked; decompressed when the response was
  // gzip-encoded).
  virtual void body(std::string_view bytes) = 0;
  // Watches: one whole event, as the hub framed it from the stream (the exact text of one JSON
  // value, as the client got it: filtered when the response is). A watch is framed once, by the
  // hub's BodyTransform, for the filter and the tap together.
  virtual void event(std::string_view raw) = 0;
  // Watches: the events of one relayed piece were all fed; what the tap holds goes to the cache
  // now (events are applied in order, a batch per piece, as soon as they arrive).
  virtual void events_done() = 0;
  // The body is not the JSON its shape must be (a watch stream that cannot be framed); nothing
  // more comes. The cache must not trust what it holds for this response.
  virtual void unframeable(std::string_view why) = 0;
  // The response ended: `complete` when the whole body arrived (false: the stream broke).
  virtual void end(bool complete) = 0;
  // A cache write for this response failed (set from the cache writer's thread). The relay then
  // ends a watch with a 410 Expired event, so the client re-lists and the cache is rebuilt.
  virtual bool failed() const = 0;
  // Lists: where the tap takes the list already framed, when the response filter frames it (then
  // it is told each member and item the client gets, and body() is not called); null when it
  // takes only bytes. Asked once, before the body.
  virtual base::ListSink* list_sink() { return nullptr; }
};

class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;
  // Status line and headers; the body follows in write() calls (chunked) and finish().
  virtual boost::asio::awaitable<bool> start(unsigned status, std::string_view content_type) = 0;
  // One piece of the body, sent at once. False when the client is gone.
  virtual boost::asio::awaitable<bool> write(std::string_view bytes) = 0;
  virtual boost::asio::awaitable<bool> finish() = 0;
  // Waits until `deadline` or until the response should end early; returns the reason for
  // ending early (an apiserver is healthy again, the client left, the hub drains) or nullopt at
  // the deadline. Used by held-open offline watches.
  virtual boost::asio::awaitable<std::optional<StreamEnd>> wait_until(
      std::chrono::steady_clock::time_point deadline) = 0;
  // A callable, safe to call from any thread and after the writer is gone, that makes a pending
  // wait_until() return nullopt early: an offline watch has a local change to send.
  virtual std::function<void()> waker() = 0;
};

// kube-apiserver's MaxRequestBodyBytes (3 MiB, twice etcd's request limit): the Forwarder reads
// an offline write's body up to it, and the cache refuses a write whose resulting object is
// larger (a patch can grow the object past its own size).
inline constexpr std::size_t kMaxOfflineWriteBytes = std::size_t{3} << 20;

// A write a client made while offline, as the Forwarder read it (the body whole, bounded by
// kMaxOfflineWriteBytes).
struct OfflineWrite {
  std::string_view method;  // "PATCH", "PUT", "POST"
  std::string_view target;  // request-target as received
  std::string_view content_type;
  std::string_view user_agent;
  std::string_view authorization;  // the Authorization header the hub would send upstream
  std::string body;
};

// What the journal's replay needs from the hub: where to send (the hub's own plain proxy port,
// so that identity, server choice and metrics are the hub's usual ones) and whether any apiserver
// is healthy.
struct ReplayContext {
  boost::asio::any_io_executor executor;  // worker 0
  std::string proxy_host;
  unsigned short proxy_port = 0;
  std::function<bool()> online;
  std::string replay_token;  // the value of kReplayHeader that marks the replay's own requests
};

// Replayed requests carry this header with the process's replay token: the Forwarder never
// journals them or holds them behind the journal (they *are* the journal). Any client on the
// node can send a header, so its value is a secret the hub makes at start (SharedState), never
// a constant: a forged one would let a write jump ahead of the node's own offline writes.
inline constexpr std::string_view kReplayHeader = "X-Yurthub-Replay";

class CacheHooks {
 public:
  virtual ~CacheHooks() = default;

  // Whether the response to this request should be cached. The Forwarder then rewrites Accept to
  // JSON (clients such as kubelet ask for protobuf but accept JSON) and calls tap() on a
  // successful JSON response.
  virtual bool cacheable(const kube::RequestInfo& info) const = 0;
  // Whether the cache keys this request's response by its body (a TokenRequest): the Forwarder
  // then reads the body whole (it is small) before sending it, and hands it to tap().
  virtual bool wants_request_body(const kube::RequestInfo& info) const = 0;
  // A tap for one cacheable response with this status; nullptr to skip it. The hub asks only for
  // a successful plain-JSON body (its ResponsePlan). `request_body`: the request's body when
  // wants_request_body() said so, else empty.
  virtual std::unique_ptr<ResponseTap> tap(const kube::RequestInfo& info, unsigned status,
                                           std::string_view request_body = {}) = 0;
  // Whether this request can be answered locally (offline): a cacheable read, or discovery.
  virtual bool serves_offline(const kube::RequestInfo& info) const = 0;
  // Answers the request from the cache. Returns the HTTP code sent, or 0 if the client went away
  // before a response was sent.
  virtual boost::asio::awaitable<unsigned> serve_offline(const kube::RequestInfo& info,
                                                         ResponseWriter& writer) = 0;

  // Whether this write is answered locally while offline (journaled patch and update, lease
  // update, event create); the Forwarder then reads the body and calls serve_offline_write.
  virtual bool serves_offline_write(const kube::RequestInfo& info) const = 0;
  virtual boost::asio::awaitable<unsigned> serve_offline_write(const kube::RequestInfo& info,
                                                               const OfflineWrite& write,
                                                               ResponseWriter& writer) = 0;
  // Whether writes made offline to this request's object still wait to be replayed; a new write
  // to it is held until they are.
  virtual bool write_pending(const kube::RequestInfo& info) const = 0;
  // Starts and stops the journal's replay (once each; the Hub calls them on start and drain).
  virtual void start_replay(ReplayContext context) = 0;
  virtual void stop_replay() = 0;
};

}  // namespace yurthub::hub
