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

RequestSeries::Kind& RequestSeries::find(const kube::RequestInfo& info, bool in_flight) {
  static_assert(base::kMaxLabelValueBytes < 256, "a value's length is one byte of the key");
  // The key: the verb, then each value after its length, so that no two label lists give the
  // same key. Sized, then copied: appending piece by piece checked and maybe grew it each time.
  const std::string_view values[] = {label(info.resource), label(info.subresource),
                                     label(info.component), label(info.user_agent)};
  std::size_t size = 1;
  for (std::string_view value : values) size += 1 + value.size();
  key_.resize(size);
  char* cursor = key_.data();
  *cursor++ = static_cast<char>(info.verb);
  for (std::string_view value : values) {
    *cursor++ = static_cast<char>(value.size());
    std::memcpy(cursor, value.data(), value.size());
    cursor += value.size();
  }
  auto it = kinds_.find(key_);
  if (it == kinds_.end()) {
    if (kinds_.size() >= kMaxKinds) {
      // A kind a request still holds stays: at most the requests in flight are kept past the bound.
      std::erase_if(kinds_, [](const auto& entry) { return entry.second->users == 0; });
    }
    it = kinds_.emplace(key_, std::make_unique<Kind>()).first;
  }
  Kind& kind = *it->second;
  // As YurtHub's IncInFlightRequests: resource requests only, client = the whole lowercased
  // User-Agent (its WithRequestClientComponent).
  if (in_flight && !kind.in_flight && info.is_resource_request) {
    kind.in_flight = &metrics_.in_flight_requests.with(
        {kube::verb_name(info.verb), info.resource, info.subresource, info.user_agent});
  }
  return kind;
}

void RequestSeries::count(const kube::RequestInfo& info, unsigned status,
                          std::uint64_t response_bytes,
                          std::optional<std::chrono::duration<double>> elapsed, Kind* found) {
  Kind& kind = found ? *found : find(info, false);
  base::Counter* requests = nullptr;
  for (const auto& [code, counter] : kind.requests) {
    if (code == status) requests = counter;
  }
  if (!requests) {
    const std::string code = status ? std::to_string(status) : "0";
    requests =
        &metrics_.requests.with({kube::verb_name(info.verb), info.resource, info.component, code});
    kind.requests.emplace_back(status, requests);
  }
  requests->inc();
  if (elapsed) {
    if (!kind.duration)
      kind.duration = &metrics_.request_duration.with({kube::verb_name(info.verb), info.resource});
    kind.duration->observe(elapsed->count());
  }
  if (response_bytes) {
    if (!kind.traffic)
      kind.traffic = &metrics_.traffic.with(
          {info.user_agent, kube::verb_name(info.verb), info.resource, info.subresource});
    kind.traffic->inc(response_bytes);
  }
}

}  // namespace yurthub::hub
