// The connection gate; see session_gates.h.
#include "hub/session_gates.h"

#include <sys/socket.h>

#include "base/log.h"
#include "kube/status.h"
#include "net/http_io.h"

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
    const kube::ApiError error = kube::api_error(
        kube::Failure::TooManyRequests, "too many open connections to the hub from this client");
    const std::string response = net::wire_text(net::simple_response(
        11, false, error.code, "application/json", kube::status_body(error), 1));
    boost::system::error_code ignored;
    socket.non_blocking(true, ignored);
    // Sent at once or not at all: a refused client gets no coroutine, no buffer, no wait.
    ::send(socket.native_handle(), response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  boost::system::error_code ignored;
  socket.close(ignored);
  return std::nullopt;
}

}  // namespace yurthub::hub
