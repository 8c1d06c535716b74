// The Forwarder's answers when no apiserver can be reached: reads the cache can serve are served
// from it, writes the cache journals are read whole and journaled, everything else fails with the
// apiserver's Status. Also the one writer of every local answer (answer_locally), the shared
// watch cache's included. Split from forwarder.cc; the same class (forwarder.h), instantiated for
// both client stream types here too.
// The member templates are in hub/forwarder_offline_impl.h; instantiated here.
#include "hub/forwarder_offline_impl.h"

namespace yurthub::hub {
namespace asio = boost::asio;

// Explicit instantiations: forwarder.cc instantiates the class's other members.
template asio::awaitable<ForwardResult> Forwarder<net::PlainStream>::unreachable(
    kube::Failure, const std::string&, RequestParser&, const kube::RequestInfo&, bool,
    ForwardResult);
template asio::awaitable<ForwardResult> Forwarder<net::PlainStream>::answer_locally(
    RequestParser&, const kube::RequestInfo&, bool, ForwardResult, LocalSource,
    const OfflineWrite*);
template asio::awaitable<ForwardResult> Forwarder<net::PlainStream>::answer_offline_write(
    RequestParser&, const kube::RequestInfo&, bool, ForwardResult);
template asio::awaitable<ForwardResult> Forwarder<net::TlsStream>::unreachable(
    kube::Failure, const std::string&, RequestParser&, const kube::RequestInfo&, bool,
    ForwardResult);
template asio::awaitable<ForwardResult> Forwarder<net::TlsStream>::answer_locally(
    RequestParser&, const kube::RequestInfo&, bool, ForwardResult, LocalSource,
    const OfflineWrite*);
template asio::awaitable<ForwardResult> Forwarder<net::TlsStream>::answer_offline_write(
    RequestParser&, const kube::RequestInfo&, bool, ForwardResult);

}  // namespace yurthub::hub
