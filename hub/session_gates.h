// The gates a client connection and each of its requests pass on the proxy listeners: the
// connection bounds (ConnectionLimits) and the in-flight bounds (--max-requests-in-flight,
// --max-long-running-requests). Used by hub/proxy_session.cc and hub/proxy_session_followers.cc.
#pragma once

#include <atomic>
#include <optional>

#include "hub/connection_limits.h"
#include "hub/request_series.h"
#include "hub/worker.h"
#include "kube/request_info.h"
#include "net/tcp_socket.h"

namespace yurthub::hub {

// kubelet's heartbeats (its lease, its node's status): a node whose lease renewals got 429 would
// be taken for dead, so these have slots of their own beyond --max-requests-in-flight.
constexpr int kHeartbeatReserve = 16;

inline bool is_heartbeat(const kube::RequestInfo& info) {
  if (info.component != "kubelet" || !info.is_resource_request) return false;
  return (info.api_group == "coordination.k8s.io" && info.resource == "leases") ||
         (info.api_group.empty() && info.resource == "nodes" &&
          (info.subresource == "status" || info.verb == kube::Verb::Get));
}

// Counts a request for its lifetime: short requests against --max-requests-in-flight (as
// kube-apiserver's max-in-flight filter), watches and tunnels against
// --max-long-running-requests (they would otherwise starve everything else).
class InFlight {
 public:
  InFlight(SharedState& shared, RequestSeries& series, const kube::RequestInfo& info)
      : shared_(shared),
        counter_(info.is_long_running() ? shared.long_running : shared.in_flight),
        use_(series.begin(info)) {
    const int limit = info.is_long_running() ? shared_.options.max_long_running_requests
                                             : shared_.options.max_requests_in_flight +
                                                   (is_heartbeat(info) ? kHeartbeatReserve : 0);
    admitted_ = counter_.fetch_add(1) < limit;
    shared_.metrics.in_flight_now.add(1);
  }
  ~InFlight() {
    counter_.fetch_sub(1);
    shared_.metrics.in_flight_now.add(-1);
  }
  bool admitted() const { return admitted_; }
  RequestSeries::Kind& kind() const { return use_.kind(); }

 private:
  SharedState& shared_;
  std::atomic<int>& counter_;
  RequestSeries::Use use_;  // node_yurthub_in_flight_requests_collector of its kind
  bool admitted_ = true;
};

// A slot for one more client connection, or nullopt when a bound is reached: then a plain-HTTP
// client is told so (a TLS one is just closed) and the connection is closed.
std::optional<ConnectionLimits::Slot> admit_connection(net::TcpSocket& socket, Worker& worker,
                                                       bool plain);

}  // namespace yurthub::hub
