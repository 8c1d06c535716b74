// Per-worker series of the request metrics; see request_series.h.
#include "hub/request_series.h"

#include <cstring>
#include <string_view>

namespace yurthub::hub {
namespace {

// The label values of one kind of request as the families see them (cut to kMaxLabelValueBytes).
std::string_view label(std::string_view value) {
  return value.substr(0, base::kMaxLabelValueBytes);
}

}  // namespace

RequestSeries::Series& RequestSeries::find(const kube::RequestInfo& info, unsigned status) {
  static_assert(base::kMaxLabelValueBytes < 256, "a value's length is one byte of the key");
  // The key: verb, status, then each value after its length, so that no two label lists give the
  // same key. Sized, then copied: appending piece by piece checked and maybe grew it each time.
  const std::string_view values[] = {label(info.resource), label(info.subresource),
                                     label(info.component), label(info.user_agent)};
  std::size_t size = 1 + sizeof status;
  for (std::string_view value : values) size += 1 + value.size();
  key_.resize(size);
  char* cursor = key_.data();
  *cursor++ = static_cast<char>(info.verb);
  std::memcpy(cursor, &status, sizeof status);
  cursor += sizeof status;
  for (std::string_view value : values) {
    *cursor++ = static_cast<char>(value.size());
    std::memcpy(cursor, value.data(), value.size());
    cursor += value.size();
  }
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
