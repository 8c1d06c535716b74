// RequestSeries: counts an answered request into node_yurthub_requests_total,
// node_yurthub_request_duration_seconds and node_yurthub_proxy_traffic_collector. Each Worker
// has one (ProxySession::record calls it); worker-thread only.
//
// Why: finding the three series by label on every request (join the values, hash them, take the
// family's lock, look up) cost about 1.3k instructions of a small GET (callgrind,
// docs/benchmarks.md). Here the three are found together, once per worker and kind of request
// (verb, resource, subresource, User-Agent, code), and kept in a map the worker alone uses. The
// map is bounded: when full it is emptied, which only costs the lookups again (the series
// themselves live in the registry, with the families' own bound).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "hub/hub_metrics.h"
#include "kube/request_info.h"

namespace yurthub::hub {

class RequestSeries {
 public:
  static constexpr std::size_t kMaxKinds = 1024;

  explicit RequestSeries(HubMetrics& metrics) : metrics_(metrics) {}

  // One request answered with `status` (0: none was sent); `elapsed` is its time to last byte
  // when it goes into the duration histogram (short requests that got an answer), else nullopt.
  void count(const kube::RequestInfo& info, unsigned status, std::uint64_t response_bytes,
             std::optional<std::chrono::duration<double>> elapsed);

  std::size_t kinds() const { return kinds_.size(); }

 private:
  struct Series {
    base::Counter* requests = nullptr;
    base::Histogram* duration = nullptr;  // found on first use: not every kind is observed
    base::Counter* traffic = nullptr;     // likewise: only responses with bytes
  };
  Series& find(const kube::RequestInfo& info, unsigned status);

  HubMetrics& metrics_;
  std::string key_;  // reused by find(): no allocation per request
  std::unordered_map<std::string, Series> kinds_;
};

}  // namespace yurthub::hub
