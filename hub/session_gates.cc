// The connection gate; see session_gates.h.
#include "hub/session_gates.h"

#include <sys/socket.h>

#include "base/log.h"
#include "kube/status.h"

namespace yurthub::hub {

std::optional<ConnectionLimits::Slot> admit_connection(net::TcpSocket& socket, Worker& worker,
                                                       bool plain) {
  SharedState& shared = worker.shared();
  const std::string peer = ConnectionLimits::peer_of(socket);
  auto slot = shared.connections->acquire(peer);
  if (slot) return slot;
  shared.metrics.failures.with({"too_many_connections"}).inc();
  YH_LOG(Warning) << "refused a client connection from " << peer << ": connection bounds reached";
  if (plain) {
    const std::string body = kube::status_body(kube::api_error(
        kube::Failure::TooManyRequests, "too many open connections to the hub from this client"));
    const std::string response =
        "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
        "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    boost::system::error_code ignored;
    socket.non_blocking(true, ignored);
    ::send(socket.native_handle(), response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  boost::system::error_code ignored;
  socket.close(ignored);
  return std::nullopt;
}

}  // namespace yurthub::hub
