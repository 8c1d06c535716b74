// Collection: a list+watch of one resource at the apiserver, as client-go's reflector keeps one
// (list -> watch from the list's resourceVersion -> re-watch from the last one seen; re-list on
// 410 Gone; back off and re-list on any other failure). It keeps the objects in memory and tells
// its owner of each change. net::Informer does the same for the hub, through the hub's own
// plain-HTTP proxy port; pool-admission has no hub in front of it, so this one speaks HTTPS to
// the apiserver with admission/api_client.h.
//
// Used by admission/node_labeller.cc for NodePools and for the Nodes of pools. Threading: all of
// it runs on the executor given, callbacks included; objects() is read there only.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include "admission/api_client.h"
#include "net/informer.h"

namespace yurthub::admission {

struct CollectionOptions {
  std::string name = {};            // for logs, e.g. "nodepools"
  std::string path = {};            // e.g. "/apis/apps.openyurt.io/v1beta2/nodepools"
  std::string label_selector = {};  // sent as labelSelector (unescaped text)
  // Watches ask for a random timeoutSeconds in [min, 2*min), as client-go's reflector does.
  std::chrono::seconds watch_timeout_min{300};
  std::chrono::milliseconds backoff_initial{500};
  std::chrono::milliseconds backoff_max{30000};
};

enum class CollectionChange {
  Listed,   // the map was replaced by a list (the first one, or a re-list): everything may differ
  Updated,  // one object was added or modified (`key`)
  Deleted,  // one object was deleted (`key`)
};

class Collection {
 public:
  using OnChange = std::function<void(CollectionChange change, const std::string& key)>;

  Collection(boost::asio::any_io_executor executor, std::shared_ptr<const ApiClient> client,
             CollectionOptions options, OnChange on_change);
  ~Collection();  // stops
  Collection(const Collection&) = delete;
  Collection& operator=(const Collection&) = delete;

  // Starts listing and watching until stop(). Once only. REQUIRES: on the executor.
  void start();
  // Ends the watch; `on_change` is never called again. REQUIRES: on the executor.
  void stop();
  // True once a list has succeeded.
  bool synced() const;
  // "name" (or "namespace/name") -> the object as last seen. REQUIRES: on the executor.
  const net::ObjectMap& objects() const;

 private:
  class State;  // shared by this object and the loop's coroutine (collection.cc)
  std::shared_ptr<State> state_;
};

}  // namespace yurthub::admission
