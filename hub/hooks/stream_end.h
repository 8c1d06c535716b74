// Why a streamed response (a relayed or offline watch, logs -f) ended before its source ended it.
// Set on the exchange by whoever ends it (the session on a health change or drain, the client
// watcher, the relay) and reported to ProxySession's metrics (node_yurthub_streams_ended_total,
// label = stream_end_name()) and to the cache's offline watch (ResponseWriter::wait_until).
#pragma once

#include <string_view>

namespace yurthub::hub {

enum class StreamEnd {
  ClientGone,       // the client closed its connection or stopped reading
  ServerUnhealthy,  // the apiserver the stream came from turned unhealthy
  ServerHealthy,    // an offline watch: an apiserver is back, the client re-watches through it
  HubDraining,      // the hub is shutting down
  UpstreamTimeout,  // the apiserver sent nothing for too long
  UpstreamClosed,   // the apiserver's stream broke
  FilterRelist,     // the filters could not correct a watch: ended with 410 Expired
  CacheRelist,      // the cache missed a write of this list: ended with 410 Expired
  FilterError,      // the body could not be filtered (bad gzip, malformed JSON): cut short
};

// The metric label value of each reason (unchanged from the strings the hub used before).
constexpr std::string_view stream_end_name(StreamEnd end) {
  switch (end) {
    case StreamEnd::ClientGone:
      return "client_gone";
    case StreamEnd::ServerUnhealthy:
      return "server_unhealthy";
    case StreamEnd::ServerHealthy:
      return "server_healthy";
    case StreamEnd::HubDraining:
      return "hub_draining";
    case StreamEnd::UpstreamTimeout:
      return "upstream_timeout";
    case StreamEnd::UpstreamClosed:
      return "upstream_closed";
    case StreamEnd::FilterRelist:
      return "filter_relist";
    case StreamEnd::CacheRelist:
      return "cache_relist";
    case StreamEnd::FilterError:
      return "filter_error";
  }
  return "unknown";
}

}  // namespace yurthub::hub
