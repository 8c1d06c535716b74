// Cache agents and cacheable requests; see cache_policy.h.
#include "cache/cache_policy.h"

#include <algorithm>

#include "kube/selector.h"

namespace yurthub::cache {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

bool never_cached_resource(std::string_view resource) {
  // Reviews are requests, not objects; CSRs carry credentials (docs/reference/yurthub.md §2.4).
  static constexpr std::string_view kNever[] = {
      "certificatesigningrequests", "subjectaccessreviews",    "selfsubjectaccessreviews",
      "localsubjectaccessreviews",  "selfsubjectrulesreviews", "tokenreviews",
      "selfsubjectreviews"};
  return std::find(std::begin(kNever), std::end(kNever), resource) != std::end(kNever);
}

}  // namespace

const std::vector<std::string>& CachePolicy::default_agents() {
  static const std::vector<std::string> kDefaults = {
      "kubelet",        "kube-proxy",       "flanneld", "coredns",
      "raven-agent-ds", "yurttunnel-agent", "yurthub"};
  return kDefaults;
}

CachePolicy::CachePolicy() { set_extra_agents(""); }

void CachePolicy::set_extra_agents(std::string_view cache_agents) {
  const std::string_view cache_agents_text = cache_agents;
  auto next = std::make_shared<Agents>();
  next->names.insert(default_agents().begin(), default_agents().end());
  while (!cache_agents.empty()) {
    const auto comma = cache_agents.find(',');
    const std::string_view name = trim(cache_agents.substr(0, comma));
    cache_agents =
        comma == std::string_view::npos ? std::string_view{} : cache_agents.substr(comma + 1);
    if (name == "*")
      next->all = true;
    else if (!name.empty())
      next->names.emplace(name);
  }
  std::lock_guard lock(mutex_);
  next->names.insert(always_.begin(), always_.end());
  extra_ = std::string(cache_agents_text);
  agents_ = std::move(next);
}

void CachePolicy::add_agent(std::string component) {
  std::string extra;
  {
    std::lock_guard lock(mutex_);
    always_.push_back(std::move(component));
    extra = extra_;
  }
  set_extra_agents(extra);
}

std::shared_ptr<const CachePolicy::Agents> CachePolicy::snapshot() const {
  std::lock_guard lock(mutex_);
  return agents_;
}

bool CachePolicy::is_agent(std::string_view component) const {
  if (component.empty()) return false;  // no User-Agent: never cached (as YurtHub)
  // A control character (the owner mark of a cache key, a separator) is never a component's.
  for (char c : component) {
    if (static_cast<unsigned char>(c) < 0x20) return false;
  }
  std::lock_guard lock(mutex_);  // held for the lookup: cheaper than copying the snapshot
  return agents_->all || agents_->names.count(component) > 0;
}

std::vector<std::string> CachePolicy::agents() const {
  const auto agents = snapshot();
  if (agents->all) return {"*"};
  return {agents->names.begin(), agents->names.end()};
}

bool CachePolicy::cacheable(const kube::RequestInfo& info) const {
  return info.is_resource_request && is_agent(info.component) && agent_request_cacheable(info);
}

bool CachePolicy::agent_request_cacheable(const kube::RequestInfo& info) {
  if (info.verb != kube::Verb::Get && info.verb != kube::Verb::List &&
      info.verb != kube::Verb::Watch)
    return false;
  if (!info.subresource.empty() && info.subresource != "status") return false;
  if (info.resource.empty() || never_cached_resource(info.resource)) return false;
  // A shard of a list is not the list its selectors name.
  if (info.sharded) return false;
  // A metadata-only client (as=PartialObjectMetadataList) must get that kind back; the cache
  // keeps full objects, so such requests pass through uncached.
  if (info.accept.find("as=PartialObjectMetadata") != std::string::npos) return false;
  return true;
}

std::optional<ListIdentity> CachePolicy::identity(const kube::RequestInfo& info) const {
  ListIdentity id{info.component, info.api_group, info.api_version, info.resource, "", "", ""};
  if (info.verb == kube::Verb::Get) return id.get_set();
  id.namespace_name = info.namespace_name;
  auto label = kube::LabelSelector::parse(info.label_selector);
  auto field = kube::FieldSelector::parse(info.field_selector);
  if (!label || !field) return std::nullopt;
  id.label_selector = label->canonical();
  id.field_selector = field->canonical();
  return id;
}

bool is_cached_discovery_path(std::string_view path) {
  if (path == "/version" || path == "/api" || path == "/apis" || path == "/api/v1") return true;
  // The service-account issuer's discovery (cache/issuer_keys.h): public keys, for everyone.
  if (path == "/.well-known/openid-configuration" || path == "/openid/v1/jwks") return true;
  // /apis/<group>/<version>
  if (path.substr(0, 6) != "/apis/") return false;
  const std::string_view rest = path.substr(6);
  const auto slash = rest.find('/');
  return slash != std::string_view::npos && slash > 0 && slash + 1 < rest.size() &&
         rest.find('/', slash + 1) == std::string_view::npos;
}

}  // namespace yurthub::cache
