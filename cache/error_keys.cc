// The cache's error keys; see error_keys.h.
#include "cache/error_keys.h"

#include "cache/list_identity.h"

namespace yurthub::cache {
namespace {

constexpr char kObjectSep = '\x02';  // identity keys hold '\0' and '\x01' (kGetSet)
constexpr std::size_t kSummaryKeys = 3;
constexpr std::size_t kSummaryWhyBytes = 200;  // and key bytes: the message stays short

// "kubelet pods default/web-0" for an object of kubelet's pod list.
std::string readable(const std::string& key) {
  const auto sep = key.find(kObjectSep);
  const std::string identity = key.substr(0, sep);
  const std::string object = sep == std::string::npos ? "" : key.substr(sep + 1);
  std::string out;
  if (auto parsed = ListIdentity::parse(identity)) {
    out = parsed->component + " " + parsed->resource +
          (parsed->group.empty() ? "" : "." + parsed->group);
  } else {
    out = identity;
  }
  if (!object.empty()) out += " " + object;
  return out.size() > kSummaryWhyBytes ? out.substr(0, kSummaryWhyBytes) + "..." : out;
}

}  // namespace

base::GaugeFamily& error_keys_count_family(base::MetricsRegistry& registry) {
  return registry.gauge("node_yurthub_error_keys_count", "error keys count", {});
}

base::GaugeFamily& error_keys_persistency_family(base::MetricsRegistry& registry) {
  return registry.gauge("node_yurthub_error_keys_persistency_status",
                        "error keys persistency status 1: ready, 0: notReady", {});
}

ErrorKeys::ErrorKeys(base::MetricsRegistry& registry)
    : count_(error_keys_count_family(registry).with({})),
      persistency_(error_keys_persistency_family(registry).with({})) {
  std::lock_guard lock(mutex_);
  publish();
}

std::string ErrorKeys::key(std::string_view identity, std::string_view namespace_name,
                           std::string_view name) {
  std::string out(identity);
  if (name.empty()) return out;
  out += kObjectSep;
  if (!namespace_name.empty()) {
    out += namespace_name;
    out += '/';
  }
  out += name;
  return out;
}

void ErrorKeys::put(const std::string& key, std::string_view why) {
  std::lock_guard lock(mutex_);
  auto it = keys_.find(key);
  if (it != keys_.end()) {
    it->second = std::string(why.substr(0, kSummaryWhyBytes));
  } else if (keys_.size() < kMaxKeys) {
    keys_.emplace(key, std::string(why.substr(0, kSummaryWhyBytes)));
  }
  publish();
}

void ErrorKeys::erase(const std::string& key) {
  std::lock_guard lock(mutex_);
  if (keys_.erase(key) != 0) publish();
}

void ErrorKeys::erase_identity(std::string_view identity) {
  std::lock_guard lock(mutex_);
  keys_.erase(std::string(identity));
  const std::string prefix = std::string(identity) + kObjectSep;
  for (auto it = keys_.lower_bound(prefix); it != keys_.end() && it->first.starts_with(prefix);) {
    it = keys_.erase(it);
  }
  publish();
}

void ErrorKeys::set_persisted(bool ok) {
  std::lock_guard lock(mutex_);
  persisted_ = ok;
  publish();
}

std::size_t ErrorKeys::size() const {
  std::lock_guard lock(mutex_);
  return keys_.size();
}

bool ErrorKeys::persisted() const {
  std::lock_guard lock(mutex_);
  return persisted_;
}

std::string ErrorKeys::summary() const {
  std::lock_guard lock(mutex_);
  std::string out = std::to_string(keys_.size()) + " cached objects could not be written";
  if (!persisted_) out += " and the last commit of the cache failed";
  std::size_t shown = 0;
  for (const auto& [key, why] : keys_) {
    if (shown++ == kSummaryKeys) {
      out += "; ...";
      break;
    }
    out += (shown == 1 ? ": " : "; ") + readable(key) + ": " + why;
  }
  return out;
}

void ErrorKeys::publish() {
  count_.set(static_cast<std::int64_t>(keys_.size()));
  persistency_.set(persisted_ ? 1 : 0);
}

}  // namespace yurthub::cache
