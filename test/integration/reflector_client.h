// ReflectorClient: what client-go's Reflector (tools/cache/reflector.go) sends, request for
// request, for the integration tests that stand for kubelet, kube-proxy and coredns. Two shapes:
//   ListWatch  (client-go before v1.35): GET ?limit=500&resourceVersion=0, then a watch from its
//              resourceVersion (allowWatchBookmarks=true, timeoutSeconds);
//   WatchList  (v1.35+, WatchListClient on by default): a streaming list first,
//              `watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&
//              allowWatchBookmarks=true` (resourceVersion omitted on the first sync, the last one
//              after), its ADDED/MODIFIED/DELETED events gathered in a temporary store until the
//              BOOKMARK annotated `k8s.io/initial-events-end: "true"`, whose resourceVersion is
//              the sync's; the same stream then goes on as the watch. An error answer (any but
//              429, 410 and 504 TooLarge, which it retries) falls back to the ListWatch shape for
//              that round; a stream closed before the bookmark is asked again at once.
// After a sync, a watch that ends cleanly is re-opened from the last resourceVersion (a plain
// watch, in both shapes); an ERROR event (410) makes it list again, in its shape.
// docs/offline-semantics.md, "Streaming lists", has the protocol as read from client-go v0.35.
// The loop runs on a thread of its own; the accessors are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "test/integration/http_client.h"

namespace yurthub::test {

enum class ClientShape { ListWatch, WatchList };

inline const char* shape_name(ClientShape shape) {
  return shape == ClientShape::WatchList ? "WatchList" : "ListWatch";
}
// How GoogleTest prints a parameter of this type.
inline void PrintTo(ClientShape shape, std::ostream* os) { *os << shape_name(shape); }

struct ReflectorOptions {
  int port = 0;
  std::string path;            // the collection, e.g. "/api/v1/pods"
  std::string field_selector;  // query-encoded, e.g. "spec.nodeName%3Dedge-node-1"
  std::string label_selector;  // query-encoded
  ClientShape shape = ClientShape::WatchList;
  std::string user_agent = "kubelet/v1.35.0 (linux/amd64) kubernetes/66452049";
  std::string accept = "application/vnd.kubernetes.protobuf,application/json";
  std::string bearer_token;  // none: the node's identity (kubelet on the plain port)
  // The watch's timeoutSeconds; client-go draws it from [300, 600) s.
  int timeout_seconds = 300;
  // Between rounds after an error, as the reflector's backoff (800 ms at first).
  std::chrono::milliseconds backoff{200};
};

class ReflectorClient {
 public:
  explicit ReflectorClient(ReflectorOptions options);
  ~ReflectorClient();  // stops the loop, closing its stream
  ReflectorClient(const ReflectorClient&) = delete;
  ReflectorClient& operator=(const ReflectorClient&) = delete;

  // Waits until the first sync (a streaming list's end bookmark, or a list); false on timeout.
  bool wait_synced(std::chrono::milliseconds timeout) const;
  // Waits until `done(objects)` holds for the store; false on timeout.
  bool wait_for(const std::function<bool(const std::map<std::string, std::string>&)>& done,
                std::chrono::milliseconds timeout) const;

  // The synced store: "namespace/name" (or "name") -> the object's JSON.
  std::map<std::string, std::string> objects() const;
  std::string resource_version() const;
  // What the last sync was: "watch-list", "list" (a fallback, or the ListWatch shape), "".
  std::string synced_by() const;
  // Every request-target sent, in order, and the answers' status codes (0: no answer).
  std::vector<std::string> requests() const;
  std::vector<int> statuses() const;
  int syncs() const;

 private:
  void run();
  // One ListAndWatch round: sync (streaming or plain list), then watch until an error.
  void list_and_watch();
  std::shared_ptr<WatchStream> open(const std::string& target);
  // The streaming list: true once synced (the stream, past the bookmark, stays in `stream`).
  // false: fall back to a list (`fallback`) or the round ended (stop, or retry later).
  bool watch_list(std::shared_ptr<WatchStream>& stream, std::size_t& consumed, bool& fallback);
  bool list();
  // Watches from the synced resourceVersion; returns when a relist is due (or stopping).
  void watch(std::shared_ptr<WatchStream> stream, std::size_t consumed);
  // Applies one event line to `store`; returns its type ("" when unreadable) and sets `rv`,
  // `end` (an initial-events-end bookmark).
  static std::string apply(const std::string& line, std::map<std::string, std::string>& store,
                           std::string& rv, bool& end);
  std::string selectors() const;
  void record(const std::string& target, int status);
  bool sleep_unless_stopped(std::chrono::milliseconds how_long);

  ReflectorOptions options_;
  mutable std::mutex mutex_;  // guards everything below
  mutable std::condition_variable changed_;
  std::map<std::string, std::string> store_;
  std::string resource_version_;
  std::string synced_by_;
  std::vector<std::string> requests_;
  std::vector<int> statuses_;
  int syncs_ = 0;
  bool stopping_ = false;
  std::shared_ptr<WatchStream> current_;  // the last stream opened, shut down by the destructor
  std::thread thread_;
};

}  // namespace yurthub::test
