// HubMetrics: the hub's metric families, registered once at startup and passed by reference to
// every unit that counts something. Names follow YurtHub's (`node_yurthub_*`) where YurtHub has the
// metric, so existing dashboards keep working; the rest are ours. Thread-safe (see metrics.h).
#pragma once

#include <string>
#include <vector>

#include "base/metrics.h"

namespace yurthub::hub {

// The label values of openyurt_version_info, in the order of its label names: component_name
// "yurthub", git_version (kVersion), git_commit and build_date ("" unless the build defines
// YURTHUB_GIT_COMMIT / YURTHUB_BUILD_DATE), go_version "" (no Go runtime), compiler (as "gcc
// 12.2.0"), platform ("linux/amd64", Go's GOOS/GOARCH names) and nodepoollabelkey.
std::vector<std::string> build_info_labels();

struct HubMetrics {
  explicit HubMetrics(base::MetricsRegistry& registry);

  base::MetricsRegistry& registry;
  // node_yurthub_requests_total{verb,resource,component,code}: every request answered.
  base::CounterFamily& requests;
  // node_yurthub_request_duration_seconds{verb,resource}: time to last byte, short requests only
  // (watches, exec and other long-running requests would drown the histogram).
  base::HistogramFamily& request_duration;
  // node_yurthub_in_flight_requests_total: requests being served now (YurtHub's name).
  base::GaugeFamily& in_flight;
  // node_yurthub_in_flight_requests_collector{verb,resource,subresources,client}: resource
  // requests being served now, client = the whole lowercased User-Agent (YurtHub's name, labels
  // and meaning).
  base::GaugeFamily& in_flight_requests;
  // node_yurthub_closable_conns_collector{server}: open TCP connections the proxy dialled to
  // each apiserver ("host:port"), idle in the pool or carrying a request (YurtHub's name).
  base::GaugeFamily& closable_conns;
  // openyurt_version_info{component_name,git_version,...}: 1, labelled with the build (YurtHub's
  // projectinfo metric; see build_info_labels()).
  base::GaugeFamily& version_info;
  // node_yurthub_server_healthy_status{server}: 1 healthy, 0 not (YurtHub's name).
  base::GaugeFamily& server_healthy;
  // node_yurthub_proxy_traffic_collector{client,verb,resource,subresources}: response bytes sent
  // to clients (YurtHub's name and labels; client = full lowercased User-Agent).
  base::CounterFamily& traffic;
  // node_yurthub_proxied_bytes_total{direction="request"|"response"}: body bytes through the hub.
  base::CounterFamily& bytes;
  // node_yurthub_request_failures_total{reason}: requests answered with a hub-made error.
  base::CounterFamily& failures;
  // node_yurthub_upstream_errors_total{server,kind}: connect, TLS, timeout, broken stream.
  base::CounterFamily& upstream_errors;
  // node_yurthub_streams_ended_total{reason}: why responses (mostly watches, relayed or offline)
  // ended before their source ended them; reason = stream_end_name().
  base::CounterFamily& streams_ended;
  // node_yurthub_health_probes_total{server,result}.
  base::CounterFamily& probes;
  // node_yurthub_client_connections{listener}: open client connections.
  base::GaugeFamily& client_connections;
  // node_yurthub_upstream_connections_total{server,event="opened"|"reused"}.
  base::CounterFamily& upstream_connections;

  // The series every request counts, looked up once here rather than by label on each request.
  base::Gauge& in_flight_now;
  base::Counter& request_bytes;
  base::Counter& response_bytes;
};

}  // namespace yurthub::hub
