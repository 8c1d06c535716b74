// Registration of the hub's metric families; see hub_metrics.h.
#include "hub/hub_metrics.h"

namespace yurthub::hub {
namespace {

// Request latency buckets from 100 µs to 60 s: the hub adds tens of microseconds on loopback,
// while a large list through a slow link takes seconds.
std::vector<double> latency_buckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
          0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30,    60};
}

}  // namespace

HubMetrics::HubMetrics(base::MetricsRegistry& r)
    : registry(r),
      requests(
          r.counter("node_yurthub_requests_total",
                    "Requests answered by the hub, by verb, resource, component and HTTP code.",
                    {"verb", "resource", "component", "code"})),
      request_duration(r.histogram("node_yurthub_request_duration_seconds",
                                   "Time from request header to last response byte, "
                                   "short-running requests only.",
                                   {"verb", "resource"}, latency_buckets())),
      in_flight(r.gauge("node_yurthub_in_flight_requests_total",
                        "Requests being served by the hub now.", {})),
      server_healthy(r.gauge("node_yurthub_server_healthy_status",
                             "Health of each apiserver as judged by the hub: 1 healthy, 0 not.",
                             {"server"})),
      traffic(r.counter("node_yurthub_proxy_traffic_collector",
                        "Response body bytes sent to clients.",
                        {"client", "verb", "resource", "subresources"})),
      bytes(r.counter("node_yurthub_proxied_bytes_total",
                      "Body bytes proxied, by direction (request: client to apiserver).",
                      {"direction"})),
      failures(r.counter("node_yurthub_request_failures_total",
                         "Requests answered with an error made by the hub, by reason.",
                         {"reason"})),
      upstream_errors(r.counter("node_yurthub_upstream_errors_total",
                                "Errors talking to an apiserver, by kind.", {"server", "kind"})),
      streams_ended(r.counter("node_yurthub_streams_ended_total",
                              "Streamed responses (watches, long responses) ended by the hub "
                              "or the apiserver before completing, by reason.",
                              {"reason"})),
      probes(r.counter("node_yurthub_health_probes_total", "Apiserver health probes, by result.",
                       {"server", "result"})),
      client_connections(r.gauge("node_yurthub_client_connections",
                                 "Open client connections, by listener.", {"listener"})),
      upstream_connections(r.counter("node_yurthub_upstream_connections_total",
                                     "Upstream connections opened or reused from the pool.",
                                     {"server", "event"})),
      in_flight_now(in_flight.with({})),
      request_bytes(bytes.with({"request"})),
      response_bytes(bytes.with({"response"})) {}

}  // namespace yurthub::hub
