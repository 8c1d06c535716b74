// Informer: the hub's own list+watch of one resource, made through the hub's own plain-HTTP proxy
// port with User-Agent "yurthub/<version>", exactly like a client on the node (YurtHub does the
// same). So its requests use the hub's identity, are cached as component "yurthub", and keep
// working offline (the cache answers the list, the watch waits for the cloud). It keeps the
// current objects in memory and publishes them as an immutable snapshot after every change.
//
// Used for the `yurt-hub-cfg` ConfigMap (cache agents, filter settings) and, in issue 4, for the
// node, NodePools and Services that filters read. Runs on the executor given (worker 0); the
// snapshot callback runs there too.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <rapidjson/document.h>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

namespace yurthub::net {

// "namespace/name" (or "name" when cluster-scoped) -> the object as last seen.
using ObjectMap = std::map<std::string, std::shared_ptr<const rapidjson::Document>>;
using ObjectSnapshot = std::shared_ptr<const ObjectMap>;

struct InformerOptions {
  std::string name;            // for logs and metrics, e.g. "yurt-hub-cfg"
  std::string path;            // collection path, e.g. "/api/v1/namespaces/kube-system/configmaps"
  std::string label_selector;  // sent as labelSelector (unescaped text)
  std::string field_selector;  // sent as fieldSelector (unescaped text)
  std::string proxy_host = "127.0.0.1";
  unsigned short proxy_port = 10261;
  std::string user_agent;  // e.g. "yurthub/0.1.0"
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
};

class Informer {
 public:
  using OnChange = std::function<void(ObjectSnapshot)>;

  Informer(boost::asio::any_io_executor executor, InformerOptions options, OnChange on_change);
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Starts listing and watching; retries until stop(). Once only: an Informer is not restarted
  // after stop(). Thread-safe (the loop itself always runs on the executor).
  void start();
  // Ends the watch and stops retrying; pending operations are cancelled and `on_change` is never
  // called again. Runs at once when called on the executor's thread (e.g. from `on_change`),
  // otherwise is dispatched to it.
  void stop();
  // True when no list/watch loop is running: before start(), or once the loop has exited after
  // stop(). Informational: the Informer may be destroyed at any time (the destructor stops it;
  // the loop owns its state, so it never touches a destroyed Informer).
  bool stopped() const;

  // True once a list has succeeded (the snapshot reflects the apiserver or the hub's cache).
  bool synced() const;
  // With missing_is_empty: the last list was answered 404.
  bool missing() const;
  ObjectSnapshot snapshot() const;  // thread-safe; never null (empty before the first list)

 private:
  // Everything the loop touches, shared by this object and the loop's coroutine (informer.cc).
  class State;
  std::shared_ptr<State> state_;
};

}  // namespace yurthub::net
