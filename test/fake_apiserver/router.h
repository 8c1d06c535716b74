// Per-request dispatch for the fake apiserver: health and version endpoints (no authentication),
// authentication (the client certificate first, then a static, service-account or bootstrap
// bearer token, and anonymous for GET of kube-public/cluster-info only), discovery, the
// service-account issuer discovery documents (issuer_discovery.h), the --deny-user
// authorizer, and the mapping of method + path to a REST verb (api_handlers.h), a watch
// (watch.h) or an exec upgrade (exec.h). Logs one line per request. Single-threaded.
#pragma once

#include <atomic>

#include <functional>
#include <optional>
#include <set>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "test/fake_apiserver/api_handlers.h"
#include "test/fake_apiserver/auth.h"
#include "test/fake_apiserver/http_io.h"
#include "test/fake_apiserver/issuer_discovery.h"
#include "test/fake_apiserver/service_account_key.h"
#include "test/fake_apiserver/store.h"
#include "test/fake_apiserver/watch.h"

namespace yurthub::fake {

struct RouterConfig {
  WatchConfig watch;
  std::set<std::string> deny_users;
  std::string server_address;  // "127.0.0.1:PORT", for /api's serverAddressByClientCIDRs
  // Owned by the Server and outliving the Router; nullptr: no service-account tokens accepted,
  // no issuer discovery served.
  const ServiceAccountKey* service_account_key = nullptr;
  const IssuerDiscovery* issuer_discovery = nullptr;
};

// What the connection does after a request.
enum class Next { KeepAlive, Close, HandedOff };

class Router {
 public:
  Router(Store& store, ApiHandlers& api, const TokenAuthenticator* tokens, RouterConfig config)
      : store_(store), api_(api), tokens_(tokens), config_(std::move(config)) {}

  void set_server_address(std::string address) { config_.server_address = std::move(address); }

  // Serves `req` on `stream`. `cert` is the connection's certificate identity (maybe empty).
  // HandedOff: the stream was moved into a WebSocket session that has ended; `closer` was
  // pointed at that session while it ran.
  boost::asio::awaitable<Next> serve(TlsStream& stream, http::request<http::string_body>& req,
                                     const Identity& cert, std::function<void()>& closer);

 private:
  struct Routed;  // a classified resource request (router.cc)

  // Maps the request to a verb on a known resource; an error reply (404, 405, 403) otherwise.
  std::optional<Reply> classify(const http::request<http::string_body>& req, const Identity& who,
                                Routed& out) const;
  // A finished reply for every verb but watch and exec.
  Reply route_resource(const Routed& r);
  // The authenticated caller: the certificate's user if a verified certificate was presented,
  // else the bearer token's (token file, then a service-account JWT, then a bootstrap token).
  Identity authenticate(const http::request<http::string_body>& req, const Identity& cert) const;
  // The user the caller acts as: its Impersonate-User and Impersonate-Group, if it sent them.
  Identity impersonate(const http::request<http::string_body>& req, Identity who) const;

  Store& store_;
  ApiHandlers& api_;
  const TokenAuthenticator* tokens_;
  RouterConfig config_;
  std::atomic<bool> unready_{false};  // POST /_fake/ready?ready=false: /readyz answers 503
};

}  // namespace yurthub::fake
