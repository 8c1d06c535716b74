// ObjectFilter: one response filter of the chain (servicetopology, masterservice, ...). A filter
// says which requests it handles and transforms one object at a time (a Service, an
// EndpointSlice, a Pod ...) given an immutable ClusterView; the FilterChain (filter_chain.h) owns
// the framing of gets, lists and watch events and calls the filters in their fixed order.
// Filters never block, never do I/O and keep no state between calls: they are shared by every
// worker thread.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "kube/request_info.h"
#include "net/informer.h"

namespace yurthub::filters {

// What the filters know about the cluster and this node, published as a whole by the
// FilterManager each time one of its inputs changes. Never mutated once published.
struct ClusterView {
  std::string node_name;
  // This node's pool: --nodepool-name, else the node's `apps.openyurt.io/nodepool` label; "" when
  // the node belongs to no pool (or the node object is not known yet).
  std::string pool_name;
  // `status.nodes` of the NodePool named pool_name; pool_known is false when that NodePool was
  // not found (then pool topology leaves objects unchanged).
  bool pool_known = false;
  std::set<std::string> pool_nodes;
  // Services by "namespace/name", as the apiserver sent them (never null once synced).
  net::ObjectSnapshot services;
  // Where in-cluster clients reach this hub over HTTPS (the masterservice family of filters
  // rewrite the kubernetes Service to it). Empty host: unknown, so those filters pass objects
  // through unchanged rather than point pods at an address nobody serves.
  std::string hub_host;
  unsigned short hub_port = 10268;
  // Each input has been listed at least once (from the apiserver or the hub's cache).
  bool node_synced = false;
  bool pools_synced = false;
  bool services_synced = false;
};

enum class Verdict {
  Keep,      // unchanged
  Modified,  // changed in place
  Drop,      // the client must not see this object
};

class ObjectFilter {
 public:
  virtual ~ObjectFilter() = default;
  // The name used in flags and in yurt-hub-cfg ("servicetopology").
  virtual std::string_view name() const = 0;
  // Whether this filter applies to responses of this request (resource, group/version, verb).
  virtual bool handles(const kube::RequestInfo& request) const = 0;
  // Whether `view` has what this filter needs; when not, objects pass through unchanged.
  virtual bool ready(const ClusterView& view) const = 0;
  // Transforms one object of the handled resource in place. An object of an unexpected shape
  // (missing fields, wrong types) is kept, never a crash.
  virtual Verdict apply(rapidjson::Value& object, rapidjson::Document::AllocatorType& allocator,
                        const ClusterView& view) const = 0;
  // Whether the result depends on cluster state that changes while a watch is open (Services,
  // pool membership): then open watches are re-filtered and corrected when that state changes.
  virtual bool reactive() const { return false; }
  // A cheap text check before parsing: false only when apply() would surely return Keep, in any
  // ClusterView, for the object whose JSON text (as the apiserver sent it) is in `json`. `json`
  // is an object's text or a larger text holding it (a whole watch event), and need not be valid
  // JSON; so the check must be one that more text can only turn true (a search for a word, never
  // a parse). When no filter of a chain may change an object, the chain passes its bytes on
  // unparsed (filter_chain.h). The default, true, always parses.
  virtual bool may_change(std::string_view /*json*/) const { return true; }
};

}  // namespace yurthub::filters
