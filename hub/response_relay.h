// ResponseRelay: streams an apiserver's response to the client, body pieces forwarded as they
// arrive (never held whole). A short response fills the relay buffer before each write; a stream
// (watch, logs -f) writes every piece at once and ends promptly when its apiserver stream
// breaks, its server turns unhealthy, the client leaves or the hub drains. When the cache taps the
// response, every piece is also handed to the tap (decompressed if the apiserver gzipped it); a
// watch whose cache writes failed is ended with a 410 Expired event so the client re-lists.
// Upgrades (exec, attach, port-forward) are tunnelled. Used by the Forwarder; worker-thread only.
#pragma once

#include <memory>

#include <boost/asio/awaitable.hpp>

#include "hub/client_connection.h"
#include "hub/exchange.h"
#include "hub/hooks/cache_hooks.h"
#include "hub/hooks/filter_hooks.h"
#include "hub/worker.h"
#include "kube/request_info.h"
#include "net/http_framing.h"

namespace yurthub::hub {

// Hands relayed pieces to the filter and the cache's tap, decompressing them first when needed
// (defined in response_relay.cc).
class BodyTransform;

template <class Stream>
class ResponseRelay {
 public:
  ResponseRelay(std::shared_ptr<ClientConnection<Stream>> client, Worker& worker);

  // Relays the response whose header `rp` has read from `up`. `keep_alive`: the client may
  // reuse the connection if the response completes. `tap` and `filter` may be null; a filtered
  // body is sent re-framed (chunked) and decoded, and the tap gets what the client gets.
  boost::asio::awaitable<ForwardResult> relay(UpstreamConnectionPtr up, ResponseParser& rp,
                                              const kube::RequestInfo& info, bool keep_alive,
                                              unsigned client_version, ResponseTap* tap,
                                              ResponseFilter* filter, ForwardResult result);
  // After 101 Switching Protocols: relays the header, then copies bytes both ways until one
  // side closes.
  boost::asio::awaitable<ForwardResult> tunnel(UpstreamConnectionPtr up, ResponseParser& rp,
                                               ForwardResult result);

 private:
  // Ends a watch with a 410 Expired `event` so the client re-lists (its list's cache is stale,
  // or its filtered view could not be corrected).
  boost::asio::awaitable<ForwardResult> end_with_relist(net::BodyFramer& framer,
                                                        BodyTransform& feed, std::string_view event,
                                                        const char* reason, ForwardResult result);
  // The relay ended early for `reason`: ends the tap and the client watch.
  ForwardResult finish(BodyTransform& feed, bool complete, const char* reason,
                       ForwardResult result);

  std::shared_ptr<ClientConnection<Stream>> client_;
  Worker& worker_;
  SharedState& shared_;
};

extern template class ResponseRelay<net::PlainStream>;
extern template class ResponseRelay<net::TlsStream>;

}  // namespace yurthub::hub
