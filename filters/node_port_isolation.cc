// nodeportisolation filter; see node_port_isolation.h. Called by the FilterChain
// (filters/registry.cc) for each Service of a handled list or watch; stateless.
#include "filters/node_port_isolation.h"

#include <string_view>

#include "filters/object_access.h"

namespace yurthub::filters {
namespace {

constexpr const char* kListenAnnotation = "nodeport.openyurt.io/listen";

std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

// Whether `pool` may listen on the node ports, per the annotation `value`. Precedence as YurtHub:
// the pool's own name, then `-<pool>`, then `*`, wherever they appear in the list.
bool pool_listens(std::string_view value, std::string_view pool) {
  bool named = false;
  bool excluded = false;
  bool wildcard = false;
  while (true) {
    auto comma = value.find(',');
    std::string_view entry = trim(value.substr(0, comma));
    if (entry == pool) {
      named = true;
    } else if (entry == "*") {
      wildcard = true;
    } else if (entry.size() == pool.size() + 1 && entry.front() == '-' && entry.substr(1) == pool) {
      excluded = true;
    }
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  if (named) return true;
  if (excluded) return false;
  return wildcard;
}

class NodePortIsolationFilter final : public ObjectFilter {
 public:
  std::string_view name() const override { return "nodeportisolation"; }

  bool handles(const kube::RequestInfo& request) const override {
    return request_matches(request, "", {"v1"}, "services", {kube::Verb::List, kube::Verb::Watch});
  }

  bool ready(const ClusterView&) const override { return true; }

  Verdict apply(rapidjson::Value& object, rapidjson::Document::AllocatorType&,
                const ClusterView& view) const override {
    if (view.pool_name.empty()) return Verdict::Keep;  // no pool: nothing to isolate from
    const rapidjson::Value* spec = find_member(object, "spec");
    if (spec == nullptr) return Verdict::Keep;
    auto type = string_member(*spec, "type");
    if (type != "NodePort" && type != "LoadBalancer") return Verdict::Keep;
    auto listen = annotation(object, kListenAnnotation);
    if (!listen) return Verdict::Keep;
    // Dropping removes the Service from kube-proxy entirely (its ClusterIP too), as YurtHub does.
    return pool_listens(*listen, view.pool_name) ? Verdict::Keep : Verdict::Drop;
  }
};

}  // namespace

std::unique_ptr<ObjectFilter> make_node_port_isolation_filter() {
  return std::make_unique<NodePortIsolationFilter>();
}

}  // namespace yurthub::filters
