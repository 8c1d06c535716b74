// Reading and sending a client's request body; see request_body.h.
// The member templates are in hub/request_body_impl.h; instantiated here.
#include "hub/request_body_impl.h"

namespace yurthub::hub {
namespace asio = boost::asio;
namespace beast = boost::beast;

template class RequestBody<net::PlainStream>;
template class RequestBody<net::TlsStream>;

}  // namespace yurthub::hub
