// RequestSeries: counts a request into node_yurthub_in_flight_requests_collector while it is
// served, and once answered into node_yurthub_requests_total, node_yurthub_request_duration_seconds
// and node_yurthub_proxy_traffic_collector. Each Worker has one (ProxySession's InFlight and
// record() call it); worker-thread only.
//
// Why: finding the series by label on every request (join the values, hash them, take the
// family's lock, look up) cost about 1.3k instructions of a small GET (callgrind,
// docs/benchmarks.md). Here a kind of request (verb, resource, subresource, component,
// User-Agent) is looked up once per request, in a map the worker alone uses, when it starts
// (begin()); its answer is counted through the Kind found then, the code's counter in a short
// list of the codes that kind was answered with. The map is bounded: when full, the kinds no
// request is using are dropped, which only costs their lookups again (the series themselves live
// in the registry, with the families' own bound).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hub/hub_metrics.h"
#include "kube/request_info.h"

namespace yurthub::hub {

class RequestSeries {
 public:
  static constexpr std::size_t kMaxKinds = 1024;

  // The series of one kind of request, found on first use. Stays valid while a Use holds it.
  struct Kind {
    base::Gauge* in_flight = nullptr;     // resource requests only, as YurtHub counts them
    base::Histogram* duration = nullptr;  // not every kind is observed
    base::Counter* traffic = nullptr;     // only responses with bytes
    std::vector<std::pair<unsigned, base::Counter*>> requests;  // by HTTP code
    int users = 0;                                              // Uses holding it
  };

  // A request being served: counted in the in-flight gauge of its kind until destroyed.
  class Use {
   public:
    explicit Use(Kind& kind) : kind_(kind) {
      ++kind_.users;
      if (kind_.in_flight) kind_.in_flight->add(1);
    }
    ~Use() {
      --kind_.users;
      if (kind_.in_flight) kind_.in_flight->add(-1);
    }
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;
    Kind& kind() const { return kind_; }

   private:
    Kind& kind_;
  };

  explicit RequestSeries(HubMetrics& metrics) : metrics_(metrics) {}

  // The request starts being served (one map lookup); count() its answer with use.kind().
  Use begin(const kube::RequestInfo& info) { return Use(find(info, true)); }

  // One request answered with `status` (0: none was sent); `elapsed` is its time to last byte
  // when it goes into the duration histogram (short requests that got an answer), else nullopt.
  // `kind` is what begin() found for `info`; without it (a request refused before it was
  // served) the kind is looked up here.
  void count(const kube::RequestInfo& info, unsigned status, std::uint64_t response_bytes,
             std::optional<std::chrono::duration<double>> elapsed, Kind* kind = nullptr);

  std::size_t kinds() const { return kinds_.size(); }

 private:
  Kind& find(const kube::RequestInfo& info, bool in_flight);

  HubMetrics& metrics_;
  std::string key_;  // reused by find(): no allocation per request
  std::unordered_map<std::string, std::unique_ptr<Kind>> kinds_;
};

}  // namespace yurthub::hub
