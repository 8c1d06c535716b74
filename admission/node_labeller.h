// The node labeller: every node of a NodePool carries nodepool.openyurt.io/hostnetwork = "true"
// when its pool's spec.hostNetwork is true and "false" otherwise, as yurt-manager keeps it
// (its node webhook sets it at creation; the label tells kube-proxy, flannel and coredns, which a
// hostNetwork pool does not need, to stay off). A controller in client-go's manner: it watches
// NodePools (apps.openyurt.io v1beta2, else v1beta1, whichever discovery lists) and the Nodes
// labelled apps.openyurt.io/nodepool, and after every change compares each affected node's label
// with what its pool says, patching only the nodes that differ: idempotent and level-triggered,
// so a restart (or a re-list) re-checks every node. A node whose pool is not (yet) known, or that
// left every pool, keeps its label as it is. docs/pool-admission.md says more.
//
// Owned by cmd/pool_admission.cc; everything runs on the one executor given.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "admission/api_client.h"
#include "admission/collection.h"
#include "net/timer.h"

namespace yurthub::admission {

inline constexpr const char* kNodePoolLabel = "apps.openyurt.io/nodepool";

// The value `node`'s hostnetwork label should have, from the NodePool its apps.openyurt.io/nodepool
// label names in `pools` (by name); nullopt when the node names no pool or an unknown one. Pure.
std::optional<std::string> desired_host_network_label(const rapidjson::Value& node,
                                                      const net::ObjectMap& pools);

// The group version of NodePools to use, from the apps.openyurt.io APIGroup discovery document:
// "v1beta2" when listed, else "v1beta1"; an error when neither is (or the document is not one).
Result<std::string> choose_node_pool_version(std::string_view api_group_json);

class NodeLabeller {
 public:
  NodeLabeller(boost::asio::any_io_executor executor, std::shared_ptr<const ApiClient> client);
  ~NodeLabeller();
  NodeLabeller(const NodeLabeller&) = delete;
  NodeLabeller& operator=(const NodeLabeller&) = delete;

  // Discovers the NodePool version (retrying until it is served), then watches and labels until
  // stop(). REQUIRES: on the executor; once.
  void start();
  void stop();

 private:
  boost::asio::awaitable<void> discover_and_watch();
  boost::asio::awaitable<void> label_dirty_nodes();
  void on_pools(CollectionChange change, const std::string& key);
  void on_nodes(CollectionChange change, const std::string& key);
  void mark_all();
  void mark(const std::string& node);

  boost::asio::any_io_executor executor_;
  std::shared_ptr<const ApiClient> client_;
  std::unique_ptr<Collection> pools_;
  std::unique_ptr<Collection> nodes_;
  std::set<std::string> dirty_;  // nodes to compare and, when they differ, patch
  net::Timer wake_;              // the labelling loop waits on it while nothing is dirty
  net::Timer discovery_retry_;
  net::Timer patch_retry_;  // after a failed patch
  bool stopped_ = false;
  // Shared with the coroutines, which check it after every wait (they may outlive this object
  // by one wake-up once stop() cancelled their timers).
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace yurthub::admission
