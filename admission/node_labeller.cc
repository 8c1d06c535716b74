// The node labeller; see node_labeller.h.
#include "admission/node_labeller.h"

#include <boost/beast/http/verb.hpp>

#include "admission/pod_affinity.h"
#include "base/json_member.h"
#include "base/json_parse.h"
#include "base/log.h"
#include "net/http_io.h"
#include "net/spawn.h"

namespace yurthub::admission {
namespace asio = boost::asio;
using boost::beast::http::verb;

namespace {

constexpr auto kCallTimeout = std::chrono::seconds(30);
constexpr auto kDiscoveryRetry = std::chrono::seconds(30);
constexpr auto kPatchRetry = std::chrono::seconds(5);

std::string label(const rapidjson::Value& object, const char* key) {
  const rapidjson::Value* meta = base::find_member(object, "metadata");
  const rapidjson::Value* labels = meta ? base::find_member(*meta, "labels") : nullptr;
  return labels ? base::string_member(*labels, key) : std::string();
}

bool has_label(const rapidjson::Value& object, const char* key) {
  const rapidjson::Value* meta = base::find_member(object, "metadata");
  const rapidjson::Value* labels = meta ? base::find_member(*meta, "labels") : nullptr;
  const rapidjson::Value* value = labels ? base::find_member(*labels, key) : nullptr;
  return value && value->IsString();
}

}  // namespace

std::optional<std::string> desired_host_network_label(const rapidjson::Value& node,
                                                      const net::ObjectMap& pools) {
  const std::string pool_name = label(node, kNodePoolLabel);
  if (pool_name.empty()) return std::nullopt;
  auto pool = pools.find(pool_name);
  if (pool == pools.end()) return std::nullopt;
  const rapidjson::Value* spec = base::find_member(*pool->second, "spec");
  const rapidjson::Value* host_network = spec ? base::find_member(*spec, "hostNetwork") : nullptr;
  return host_network && host_network->IsBool() && host_network->GetBool() ? "true" : "false";
}

Result<std::string> choose_node_pool_version(std::string_view api_group_json) {
  rapidjson::Document group;
  if (Status parsed = base::parse_json(api_group_json, group); !parsed) return parsed.error();
  const rapidjson::Value* versions = base::find_member(group, "versions");
  bool v1beta1 = false;
  if (versions && versions->IsArray()) {
    for (const auto& version : versions->GetArray()) {
      const std::string name = base::string_member(version, "version");
      if (name == "v1beta2") return name;
      v1beta1 = v1beta1 || name == "v1beta1";
    }
  }
  if (v1beta1) return std::string("v1beta1");
  return make_error(ErrorCode::NotFound, "apps.openyurt.io serves neither v1beta2 nor v1beta1");
}

NodeLabeller::NodeLabeller(asio::any_io_executor executor, std::shared_ptr<const ApiClient> client)
    : executor_(std::move(executor)),
      client_(std::move(client)),
      wake_(executor_),
      discovery_retry_(executor_),
      patch_retry_(executor_) {}

NodeLabeller::~NodeLabeller() { stop(); }

void NodeLabeller::start() {
  net::spawn_detached(executor_, discover_and_watch(), "node labeller discovery");
  net::spawn_detached(executor_, label_dirty_nodes(), "node labeller");
}

void NodeLabeller::stop() {
  stopped_ = true;
  *alive_ = false;
  if (pools_) pools_->stop();
  if (nodes_) nodes_->stop();
  wake_.cancel();
  discovery_retry_.cancel();
  patch_retry_.cancel();
}

asio::awaitable<void> NodeLabeller::discover_and_watch() {
  const auto alive = alive_;
  std::string version;
  for (;;) {
    auto answer = co_await client_->call(executor_, verb::get, "/apis/apps.openyurt.io", "", "",
                                         kCallTimeout);
    if (!*alive || stopped_) co_return;
    Result<std::string> chosen = make_error("");
    if (!answer) {
      chosen = answer.error();
    } else if (answer->status != 200) {
      chosen = make_error("GET /apis/apps.openyurt.io: HTTP " + std::to_string(answer->status) +
                          " (is the NodePool CRD installed?)");
    } else {
      chosen = choose_node_pool_version(answer->body);
    }
    if (chosen) {
      version = *chosen;
      break;
    }
    YH_LOG(Warning) << "node labeller: discovering NodePools: " << chosen.error().message
                    << " (retrying in " << kDiscoveryRetry.count() << " s)";
    discovery_retry_.expires_after(kDiscoveryRetry);
    co_await discovery_retry_.async_wait(net::kNoThrow);
    if (!*alive || stopped_) co_return;
  }
  YH_LOG(Info) << "node labeller: NodePools of apps.openyurt.io/" << version;
  pools_ = std::make_unique<Collection>(
      executor_, client_,
      CollectionOptions{.name = "nodepools",
                        .path = "/apis/apps.openyurt.io/" + version + "/nodepools"},
      [this](CollectionChange change, const std::string& key) { on_pools(change, key); });
  nodes_ = std::make_unique<Collection>(
      executor_, client_,
      CollectionOptions{.name = "nodes", .path = "/api/v1/nodes", .label_selector = kNodePoolLabel},
      [this](CollectionChange change, const std::string& key) { on_nodes(change, key); });
  pools_->start();
  nodes_->start();
}

void NodeLabeller::on_pools(CollectionChange change, const std::string& key) {
  if (change == CollectionChange::Listed || !nodes_) {
    mark_all();
    return;
  }
  // The nodes of the pool that changed (or went: they keep their label, see node_labeller.h).
  for (const auto& [name, node] : nodes_->objects()) {
    if (label(*node, kNodePoolLabel) == key) mark(name);
  }
}

void NodeLabeller::on_nodes(CollectionChange change, const std::string& key) {
  if (change == CollectionChange::Listed) {
    mark_all();
  } else if (change == CollectionChange::Updated) {
    mark(key);
  }
}

void NodeLabeller::mark_all() {
  if (!nodes_) return;
  for (const auto& entry : nodes_->objects()) dirty_.insert(entry.first);
  wake_.cancel();
}

void NodeLabeller::mark(const std::string& node) {
  dirty_.insert(node);
  wake_.cancel();
}

// Takes dirty nodes one at a time once both collections have synced, and patches each whose label
// differs from its pool's. A failed patch puts the node back and waits kPatchRetry.
asio::awaitable<void> NodeLabeller::label_dirty_nodes() {
  const auto alive = alive_;
  while (!stopped_) {
    if (dirty_.empty() || !pools_ || !nodes_ || !pools_->synced() || !nodes_->synced()) {
      wake_.expires_at(base::Clock::time_point::max());
      co_await wake_.async_wait(net::kNoThrow);
      if (!*alive) co_return;
      continue;
    }
    const std::string name = *dirty_.begin();
    dirty_.erase(dirty_.begin());
    auto found = nodes_->objects().find(name);
    if (found == nodes_->objects().end()) continue;
    const auto node = found->second;  // the map may change while the patch is on its way
    const std::optional<std::string> desired = desired_host_network_label(*node, pools_->objects());
    if (!desired ||
        (has_label(*node, kHostNetworkLabel) && label(*node, kHostNetworkLabel) == *desired)) {
      continue;
    }
    const std::string patch = std::string(R"({"metadata":{"labels":{")") + kHostNetworkLabel +
                              R"(":")" + *desired + R"("}}})";
    auto answer = co_await client_->call(executor_, verb::patch, "/api/v1/nodes/" + name, patch,
                                         "application/merge-patch+json", kCallTimeout);
    if (!*alive) co_return;
    if (answer && answer->status == 200) {
      YH_LOG(Info) << "node labeller: node " << name << ": " << kHostNetworkLabel << "=" << *desired
                   << " (pool " << label(*node, kNodePoolLabel) << ")";
      continue;
    }
    if (answer && answer->status == 404) continue;  // deleted meanwhile: its DELETED event follows
    YH_LOG(Warning) << "node labeller: patching node " << name << ": "
                    << (answer ? "HTTP " + std::to_string(answer->status) + ": " +
                                     answer->body.substr(0, 300)
                               : answer.error().message)
                    << " (retrying in " << kPatchRetry.count() << " s)";
    dirty_.insert(name);
    patch_retry_.expires_after(kPatchRetry);
    co_await patch_retry_.async_wait(net::kNoThrow);
    if (!*alive) co_return;
  }
}

}  // namespace yurthub::admission
