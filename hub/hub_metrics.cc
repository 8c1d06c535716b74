// Registration of the hub's metric families; see hub_metrics.h.
#include "hub/hub_metrics.h"

#include "hub/version.h"

namespace yurthub::hub {
namespace {

// Request latency buckets from 100 µs to 60 s: the hub adds tens of microseconds on loopback,
// while a large list through a slow link takes seconds.
std::vector<double> latency_buckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
          0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30,    60};
}

// Go's GOARCH for this build's target.
const char* goarch() {
#if defined(__x86_64__)
  return "amd64";
#elif defined(__aarch64__)
  return "arm64";
#elif defined(__arm__)
  return "arm";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#else
  return "unknown";
#endif
}

std::string compiler() {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "gcc " __VERSION__;
#else
  return "unknown";
#endif
}

#ifndef YURTHUB_GIT_COMMIT
#define YURTHUB_GIT_COMMIT ""
#endif
#ifndef YURTHUB_BUILD_DATE
#define YURTHUB_BUILD_DATE ""
#endif

}  // namespace

std::vector<std::string> build_info_labels() {
  return {"yurthub",
          kVersion,
          YURTHUB_GIT_COMMIT,
          YURTHUB_BUILD_DATE,
          "",
          compiler(),
          std::string("linux/") + goarch(),
          "apps.openyurt.io/nodepool"};
}

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
      in_flight_requests(r.gauge("node_yurthub_in_flight_requests_collector",
                                 "Resource requests being served by the hub now, by verb, "
                                 "resource, subresource and client (User-Agent).",
                                 {"verb", "resource", "subresources", "client"})),
      closable_conns(r.gauge("node_yurthub_closable_conns_collector",
                             "Open TCP connections from the hub to each apiserver.", {"server"})),
      version_info(r.gauge("openyurt_version_info",
                           "A metric with a constant '1' value labeled by git version, git "
                           "commit, build date, Go version, compiler and nodepoollabelkey from "
                           "which OpenYurt was built, and platform on which it is running.",
                           {"component_name", "git_version", "git_commit", "build_date",
                            "go_version", "compiler", "platform", "nodepoollabelkey"})),
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
      response_bytes(bytes.with({"response"})) {
  version_info.with(build_info_labels()).set(1);
}

}  // namespace yurthub::hub
