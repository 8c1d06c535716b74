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
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>

#include "hub/request_info.h"

namespace yurthub::hub {

class ResponseTap {
 public:
  virtual ~ResponseTap() = default;
  // Body bytes as relayed (de-chunked; decompressed when the response was gzip-encoded).
  virtual void body(std::string_view bytes) = 0;
  // The response ended: `complete` when the whole body arrived (false: the stream broke).
  virtual void end(bool complete) = 0;
  // A cache write for this response failed (set from the cache writer's thread). The relay then
  // ends a watch with a 410 Expired event, so the client re-lists and the cache is rebuilt.
  virtual bool failed() const = 0;
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
  // ending early ("server_healthy", "client_gone", "hub_draining", ...) or nullopt at the
  // deadline. Used by held-open offline watches.
  virtual boost::asio::awaitable<std::optional<std::string>> wait_until(
      std::chrono::steady_clock::time_point deadline) = 0;
};

class CacheHooks {
 public:
  virtual ~CacheHooks() = default;

  // Whether the response to this request should be cached. The Forwarder then rewrites Accept to
  // JSON (clients such as kubelet ask for protobuf but accept JSON) and calls tap() on a 2xx.
  virtual bool cacheable(const RequestInfo& info) const = 0;
  // A tap for one cacheable response with this status and content type; nullptr to skip it.
  virtual std::unique_ptr<ResponseTap> tap(const RequestInfo& info, unsigned status,
                                           std::string_view content_type) = 0;
  // Whether this request can be answered locally (offline): a cacheable read, or discovery.
  virtual bool serves_offline(const RequestInfo& info) const = 0;
  // Answers the request from the cache. Returns the HTTP code sent, or 0 if the client went away
  // before a response was sent.
  virtual boost::asio::awaitable<unsigned> serve_offline(const RequestInfo& info,
                                                         ResponseWriter& writer) = 0;
};

}  // namespace yurthub::hub
