// Per-worker series of the request metrics; see request_series.h.
#include "hub/request_series.h"

#include <string_view>

namespace yurthub::hub {
namespace {

// Appends `value` as the families see it (cut to kMaxLabelValueBytes), length first so that no
// two label lists give the same key.
void append_value(std::string& key, std::string_view value) {
  value = value.substr(0, base::kMaxLabelValueBytes);
  key.push_back(static_cast<char>(value.size()));
  key.append(value);
}

}  // namespace

RequestSeries::Series& RequestSeries::find(const kube::RequestInfo& info, unsigned status) {
  static_assert(base::kMaxLabelValueBytes < 256, "a value's length is one byte of the key");
  key_.clear();
  key_.push_back(static_cast<char>(info.verb));
  key_.append(reinterpret_cast<const char*>(&status), sizeof status);
  append_value(key_, info.resource);
  append_value(key_, info.subresource);
  append_value(key_, info.component);
  append_value(key_, info.user_agent);
  if (auto it = kinds_.find(key_); it != kinds_.end()) return it->second;
  if (kinds_.size() >= kMaxKinds) kinds_.clear();
  const std::string code = status ? std::to_string(status) : "0";
  Series series;
  series.requests =
      &metrics_.requests.with({kube::verb_name(info.verb), info.resource, info.component, code});
  return kinds_.emplace(key_, series).first->second;
}

void RequestSeries::count(const kube::RequestInfo& info, unsigned status,
                          std::uint64_t response_bytes,
                          std::optional<std::chrono::duration<double>> elapsed) {
  Series& series = find(info, status);
  series.requests->inc();
  if (elapsed) {
    if (!series.duration)
      series.duration =
          &metrics_.request_duration.with({kube::verb_name(info.verb), info.resource});
    series.duration->observe(elapsed->count());
  }
  if (response_bytes) {
    if (!series.traffic)
      series.traffic = &metrics_.traffic.with(
          {info.user_agent, kube::verb_name(info.verb), info.resource, info.subresource});
    series.traffic->inc(response_bytes);
  }
}

}  // namespace yurthub::hub
