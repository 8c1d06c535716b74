// OtaHandler: YurtHub's OTA (over-the-air upgrade) endpoints on the admin port, which
// yurt-manager's OTA upgrade model and operators on the node call (pkg/yurthub/otaupdate,
// routed in pkg/yurthub/server/server.go):
//
//   GET  /pods                                                the node's pods (cache), a PodList
//   POST /openyurt.io/v1/namespaces/{ns}/pods/{pod}/upgrade    upgrade the pod now
//   POST /openyurt.io/v1/namespaces/{ns}/pods/{pod}/imagepull  ask for its new image's pre-pull
//
// with upstream's status codes and plain-text messages. Unlike upstream, all three are served
// only to root or the hub's own user on the node (hub::trusted_local_peer): anyone else gets 403.
// As upstream, the POSTs answer 503 while no apiserver is healthy, and GET /pods answers from the
// cache online and offline. The POSTs read and write the pod (and a static pod's ConfigMap)
// straight at a healthy apiserver with the hub's identity (hub/certificate/api_call.h), never
// through the proxy: nothing of them is cached or journaled. Every answer is counted in
// node_yurthub_ota_requests_total{endpoint,code}. Created by cmd/yurthub.cc, registered as the
// Hub's AdminRoutes; handle() runs on the admin port's executor.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <boost/asio/awaitable.hpp>

#include "base/metrics.h"
#include "cache/store.h"
#include "hub/admin_server.h"
#include "hub/certificate/api_call.h"
#include "hub/flag_values.h"
#include "net/tls.h"
#include "ota/static_pod_files.h"

namespace yurthub::ota {

// Which OTA endpoint a path names.
struct OtaPath {
  enum class Endpoint { Pods, Upgrade, ImagePull };
  Endpoint endpoint = Endpoint::Pods;
  std::string namespace_name;  // upgrade and imagepull
  std::string pod_name;
};

// The endpoint of `path`, nullopt when it is none of the three. A namespace or pod name must be
// one non-empty path segment of the characters a Kubernetes name may hold (lowercase letters,
// digits, '-' and '.'); any other segment is no OTA path.
std::optional<OtaPath> parse_ota_path(std::string_view path);

class OtaHandler {
 public:
  struct Settings {
    std::string node_name;
    StaticPodDirs static_pods;
    // Each call to the apiserver (an upgrade makes up to three).
    std::chrono::milliseconds call_timeout{10000};
  };
  // A healthy apiserver, nullopt while none is (hub::Hub::pick_healthy_server).
  using PickServer = std::function<std::optional<hub::ServerAddress>()>;

  // `store`: the node cache, or null (cloud mode, or a cache that could not be opened: GET /pods
  // then lists the node's pods at the apiserver). `tls` outlives the handler.
  OtaHandler(Settings settings, PickServer pick_server, const net::UpstreamTls& tls,
             cache::Store* store, base::MetricsRegistry& registry);

  // The routes for hub::Hub::add_admin_routes; they call this handler, which must outlive them.
  hub::AdminRoutes routes();

  // Answers `request` (one of parse_ota_path's paths); `request` lives until it has answered.
  boost::asio::awaitable<hub::AdminAnswer> handle(const hub::AdminRequest& request);

 private:
  boost::asio::awaitable<hub::AdminAnswer> answer(const hub::AdminRequest& request,
                                                  const OtaPath& path);
  boost::asio::awaitable<hub::AdminAnswer> list_pods();
  // The pod named by `path`, into `pod`; an error answer when it could not be read.
  boost::asio::awaitable<std::optional<hub::AdminAnswer>> read_pod(const hub::ServerAddress& server,
                                                                   const OtaPath& path,
                                                                   rapidjson::Document& pod);
  boost::asio::awaitable<hub::AdminAnswer> upgrade(const hub::ServerAddress& server,
                                                   const OtaPath& path);
  boost::asio::awaitable<hub::AdminAnswer> upgrade_static_pod(const hub::ServerAddress& server,
                                                              const OtaPath& path);
  boost::asio::awaitable<hub::AdminAnswer> image_pull(const hub::ServerAddress& server,
                                                      const OtaPath& path);
  boost::asio::awaitable<Result<hub::ApiAnswer>> call(const hub::ServerAddress& server,
                                                      const hub::ApiCall& call);

  Settings settings_;
  PickServer pick_server_;
  const net::UpstreamTls& tls_;
  cache::Store* store_;
  base::CounterFamily& requests_;
};

}  // namespace yurthub::ota
