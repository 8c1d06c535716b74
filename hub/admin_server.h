// AdminServer: the plain-HTTP admin port (--bind-address:--serve-port, 10267): `/v1/healthz`
// (always 200 OK), `/v1/readyz` (200 OK, or 500 with the reason, as YurtHub; then a line on what
// runs degraded, such as a missing dummy interface, which never makes it 500), and `/metrics`
// (the registry plus process_* metrics in Prometheus text format), and `POST /v1/token` (a new
// join token, `{"jointoken":"..."}`, as YurtHub's endpoint) when the hub manages its own
// certificate. A new join token changes how the node proves itself to the cloud, so it is taken
// only from root or the hub's own user on the node (the peer's uid, net/peer_credentials.h):
// anyone else gets 403 (trusted_local_peer()). Endpoints of higher layers (the OTA endpoints,
// ota/ota_handler.h) are served through AdminRoutes. Its connections count against the proxy's
// bounds (ConnectionLimits), so idle connections to it cannot take the hub's descriptors. Serves
// one connection per call to serve(); the Hub's admin Listener calls it on the first worker.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/verb.hpp>

#include "base/metrics.h"
#include "base/result.h"
#include "hub/connection_limits.h"
#include "net/tcp_socket.h"

namespace yurthub::hub {

// One request to an AdminRoutes endpoint.
struct AdminRequest {
  boost::beast::http::verb method = boost::beast::http::verb::get;
  std::string path;               // without the query
  std::optional<uid_t> peer_uid;  // the caller's uid on this node; none: not known (remote)
};

// What an AdminRoutes endpoint answers.
struct AdminAnswer {
  unsigned status = 200;
  std::string content_type = "text/plain";
  std::string body;
};

// Endpoints served on the admin port by a higher layer. `claims(path)` says whether a path is
// theirs; `handle` answers it (on the admin port's executor; it may take as long as its own
// bounded calls take), its request valid until it has answered. Both must be set, or neither.
// (By reference: GCC 12 destroys a coroutine's by-value class parameter twice, PR 99576.)
struct AdminRoutes {
  std::function<bool(std::string_view path)> claims;
  std::function<boost::asio::awaitable<AdminAnswer>(const AdminRequest& request)> handle;
};

// Whether a peer running as `uid` may use the admin port's privileged endpoints: root or the
// hub's own (effective) user. None (the uid is not known: not loopback) is refused.
bool trusted_local_peer(std::optional<uid_t> uid);

class AdminServer {
 public:
  // Returns nullopt when ready, else why not.
  using ReadinessCheck = std::function<std::optional<std::string>()>;

  // Takes a new join token; empty when the hub has no bootstrap token to replace.
  using TokenUpdate = std::function<Status(const std::string& token)>;

  // Lines for /v1/readyz's body about what is degraded without making the hub unready ("" when
  // none): the missing dummy interface.
  using ReadinessNotes = std::function<std::string()>;

  // `limits`: the bounds its connections count against (none: unbounded, for tests).
  AdminServer(const base::MetricsRegistry& registry, ReadinessCheck readiness,
              TokenUpdate token_update = {}, ConnectionLimits* limits = nullptr,
              AdminRoutes routes = {}, ReadinessNotes notes = {});
  boost::asio::awaitable<void> serve(net::TcpSocket socket);

 private:
  // The status and text answering POST /v1/token with `body` from a peer running as `uid`.
  std::pair<unsigned, std::string> update_token(const std::string& body,
                                                std::optional<uid_t> uid) const;

  const base::MetricsRegistry& registry_;
  ReadinessCheck readiness_;
  ReadinessNotes notes_;
  TokenUpdate token_update_;
  ConnectionLimits* limits_;
  AdminRoutes routes_;
};

// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_open_fds, process_start_time_seconds, read from /proc/self (as Go's process collector).
std::string render_process_metrics();

}  // namespace yurthub::hub
