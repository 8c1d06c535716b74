// Serving one request: server choice, sending, cache decisions and fallback; see forwarder.h.
// The member templates are in hub/forwarder_impl.h; instantiated here.
#include "hub/forwarder_impl.h"

namespace yurthub::hub {
namespace asio = boost::asio;
namespace beast = boost::beast;

template class Forwarder<net::PlainStream>;
template class Forwarder<net::TlsStream>;

}  // namespace yurthub::hub
