// The leader-hub-<pool> ConfigMap; see leader_hub_config.h.
#include "pool/leader_hub_config.h"

#include "base/json_member.h"
#include "base/log.h"

namespace yurthub::pool {
namespace {

// data[key] of the ConfigMap; nullptr when absent.
const rapidjson::Value* data_value(const rapidjson::Value& configmap, const char* key) {
  const rapidjson::Value* data = base::find_member(configmap, "data");
  return data ? base::find_member(*data, key) : nullptr;
}

std::string data_string(const rapidjson::Value& configmap, const char* key) {
  const rapidjson::Value* value = data_value(configmap, key);
  return value && value->IsString() ? value->GetString() : std::string();
}

}  // namespace

LeaderHubConfig parse_leader_hub_config(const rapidjson::Value& configmap) {
  LeaderHubConfig c;
  if (data_value(configmap, "pool-scoped-metadata") != nullptr) {
    std::string bad;
    c.resources = parse_pool_resources(data_string(configmap, "pool-scoped-metadata"), &bad);
    if (!bad.empty())
      YH_LOG(Warning) << "leader-hub ConfigMap: ignored pool-scoped-metadata " << bad;
  }
  const std::string leaders = data_string(configmap, "leaders");
  std::string_view rest = leaders;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const auto slash = item.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 == item.size()) continue;
    c.leaders.push_back({std::string(item.substr(0, slash)), std::string(item.substr(slash + 1))});
  }
  c.leader_election = data_string(configmap, "enable-leader-election") == "true";
  c.interconnectivity = data_string(configmap, "interconnectivity") == "true";
  return c;
}

LeaderHubWatcher::LeaderHubWatcher(SharedCache& cache, std::vector<PoolResource> defaults,
                                   InformerFactory make_informer, LeaderHubs* leaders,
                                   std::string namespace_name)
    : cache_(cache),
      defaults_(std::move(defaults)),
      make_informer_(std::move(make_informer)),
      leaders_(leaders),
      namespace_name_(std::move(namespace_name)) {}

void LeaderHubWatcher::set_pool(const std::string& pool) {
  if (pool == pool_ && (informer_ || pool.empty())) return;
  pool_ = pool;
  if (informer_) informer_->stop();
  informer_.reset();
  if (pool_.empty()) {
    cache_.set_resources(defaults_);
    if (leaders_) leaders_->set_leaders({});
    return;
  }
  net::InformerOptions o;
  o.name = "leader-hub-" + pool_;
  o.path = "/api/v1/namespaces/" + namespace_name_ + "/configmaps";
  o.field_selector = "metadata.name=leader-hub-" + pool_;
  o.missing_is_empty = true;
  informer_ = make_informer_(std::move(o),
                             [this](const net::ObjectSnapshot& snapshot) { on_config(snapshot); });
  informer_->start();
}

void LeaderHubWatcher::stop() {
  if (informer_) informer_->stop();
}

void LeaderHubWatcher::on_config(const net::ObjectSnapshot& snapshot) {
  std::optional<LeaderHubConfig> config;
  for (const auto& [key, object] : *snapshot) config = parse_leader_hub_config(*object);
  std::vector<PoolResource> resources = defaults_;
  if (config && config->resources) resources = *config->resources;
  cache_.set_resources(resources);
  std::string leaders;
  if (config) {
    for (const auto& leader : config->leaders) {
      leaders += (leaders.empty() ? "" : ",") + leader.node + "/" + leader.ip;
    }
  }
  const bool election = config && config->leader_election;
  if (leaders != last_leaders_) {
    last_leaders_ = leaders;
    YH_LOG(Info) << "leader-hub-" << pool_ << " names leaders \"" << leaders
                 << "\" (enable-leader-election " << (election ? "true" : "false") << ")";
  }
  if (leaders_) {
    leaders_->set_leaders(config
                              ? leaders_to_follow(config->leaders, election, leaders_->node_name())
                              : std::vector<LeaderHub>{});
  }
}

}  // namespace yurthub::pool
