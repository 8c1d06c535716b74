// Informer: the hub's own list+watch of one resource (a Reflector, reflector.h), made through
// the hub's own plain-HTTP proxy port with User-Agent "yurthub/<version>", exactly like a client
// on the node (YurtHub does the same). So its requests use the hub's identity, are cached as
// component "yurthub", and keep working offline (the cache answers the list, the watch waits for
// the cloud). It keeps the current objects in memory and publishes them as an immutable snapshot
// after every change.
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

#include "net/reflector.h"

namespace yurthub::net {

// "namespace/name" (or "name" when cluster-scoped) -> the object as last seen.
using ObjectMap = std::map<std::string, std::shared_ptr<const rapidjson::Document>>;
using ObjectSnapshot = std::shared_ptr<const ObjectMap>;

// What to list and watch, and how (reflector.h).
using InformerOptions = ReflectorOptions;

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
  class Sink;  // keeps the objects (informer.cc)
  std::shared_ptr<Sink> sink_;
  std::unique_ptr<Reflector> reflector_;
};

}  // namespace yurthub::net
