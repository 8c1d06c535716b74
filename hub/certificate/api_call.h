// One request to an apiserver on its own connection, for the hub's own few calls (cluster-info,
// create and read a CertificateSigningRequest, the OTA endpoints' pod reads and writes, the node's
// Autonomy condition): dial with connect_upstream(), send, read the whole answer (at most
// kMaxApiAnswerBytes), close. Not for the proxy's traffic, which goes through the upstream pool.
// Called by hub/certificate/{cluster_discovery,csr_client}.cc, ota/ota_handler.cc, and by
// cmd/yurthub.cc for cache/autonomy_keeper.h.
#pragma once

#include <chrono>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/verb.hpp>

#include "base/result.h"
#include "hub/options.h"
#include "net/tls.h"

namespace yurthub::hub {

inline constexpr std::size_t kMaxApiAnswerBytes = 1024 * 1024;

struct ApiCall {
  boost::beast::http::verb method = boost::beast::http::verb::get;
  std::string target = {};                        // path and query (base::append_query_param)
  std::string body = {};                          // sent when not empty
  std::string content_type = "application/json";  // of `body`
  std::string agent = "certificate-manager";      // User-Agent: yurthub/<version> <agent>
};

struct ApiAnswer {
  unsigned status = 0;
  std::string body;
};

// Sends `call` to `server` presenting `tls`'s hub identity (its certificate, or its bearer
// token), within `timeout` for the whole exchange. An error when the server cannot be reached or
// the answer is not HTTP; any HTTP status is an answer.
boost::asio::awaitable<Result<ApiAnswer>> api_call(boost::asio::any_io_executor executor,
                                                   const ServerAddress& server,
                                                   const net::UpstreamTls& tls, ApiCall call,
                                                   std::chrono::milliseconds timeout);

}  // namespace yurthub::hub
