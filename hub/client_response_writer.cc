// Offline answers to the client; see client_response_writer.h.
// The member templates are in hub/client_response_writer_impl.h; instantiated here.
#include "hub/client_response_writer_impl.h"

namespace yurthub::hub {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

template class ClientResponseWriter<net::PlainStream>;
template class ClientResponseWriter<net::TlsStream>;

}  // namespace yurthub::hub
