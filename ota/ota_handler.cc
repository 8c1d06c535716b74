// The OTA endpoints; see ota_handler.h. Messages and status codes follow YurtHub's
// pkg/yurthub/otaupdate/ota.go: errors are plain text, successes a text with the JSON type.
#include "ota/ota_handler.h"

#include <ctime>
#include <vector>

#include <boost/asio/this_coro.hpp>

#include "base/clock.h"
#include "base/json_parse.h"
#include "base/log.h"
#include "base/time_text.h"
#include "base/url.h"
#include "ota/node_pods.h"
#include "ota/pod_checks.h"

namespace yurthub::ota {
namespace asio = boost::asio;
using boost::beast::http::verb;
using hub::AdminAnswer;

namespace {

constexpr std::string_view kPodsPath = "/pods";
constexpr std::string_view kPodPrefix = "/openyurt.io/v1/namespaces/";

// upstream's WriteErr: no content type set, so Go's server sniffs the body as text.
AdminAnswer error_text(unsigned status, std::string text) {
  return AdminAnswer{status, "text/plain; charset=utf-8", std::move(text)};
}

// upstream's WriteJSONResponse: the bytes as given, typed JSON.
AdminAnswer json_ok(std::string body) {
  return AdminAnswer{200, "application/json", std::move(body)};
}

bool name_segment(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  }
  return true;
}

const char* endpoint_label(OtaPath::Endpoint endpoint) {
  switch (endpoint) {
    case OtaPath::Endpoint::Pods:
      return "pods";
    case OtaPath::Endpoint::Upgrade:
      return "upgrade";
    case OtaPath::Endpoint::ImagePull:
      return "imagepull";
  }
  return "unknown";
}

std::string pod_target(const OtaPath& path) {
  return "/api/v1/namespaces/" + path.namespace_name + "/pods/" + path.pod_name;
}

// What client-go's error says for an answer that is not a success: the Status's message.
std::string api_error(const hub::ApiAnswer& answer) {
  rapidjson::Document status;
  if (base::parse_json(answer.body, status) && base::string_member(status, "kind") == "Status") {
    std::string message = base::string_member(status, "message");
    if (!message.empty()) return message;
  }
  return "the server answered " + std::to_string(answer.status);
}

bool success(unsigned status) { return status >= 200 && status < 300; }

}  // namespace

std::optional<OtaPath> parse_ota_path(std::string_view path) {
  if (path == kPodsPath) return OtaPath{};
  if (!path.starts_with(kPodPrefix)) return std::nullopt;
  path.remove_prefix(kPodPrefix.size());
  std::vector<std::string_view> parts;
  for (std::size_t start = 0; parts.size() <= 4;) {
    const std::size_t end = path.find('/', start);
    parts.push_back(path.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (parts.size() != 4 || parts[1] != "pods" || !name_segment(parts[0]) ||
      !name_segment(parts[2])) {
    return std::nullopt;
  }
  OtaPath out{OtaPath::Endpoint::Upgrade, std::string(parts[0]), std::string(parts[2])};
  if (parts[3] == "imagepull") {
    out.endpoint = OtaPath::Endpoint::ImagePull;
  } else if (parts[3] != "upgrade") {
    return std::nullopt;
  }
  return out;
}

OtaHandler::OtaHandler(Settings settings, PickServer pick_server, const net::UpstreamTls& tls,
                       cache::Store* store, base::MetricsRegistry& registry)
    : settings_(std::move(settings)),
      pick_server_(std::move(pick_server)),
      tls_(tls),
      store_(store),
      requests_(registry.counter("node_yurthub_ota_requests_total",
                                 "Requests to the OTA endpoints of the admin port, by endpoint "
                                 "(pods, upgrade, imagepull) and the status answered.",
                                 {"endpoint", "code"})) {}

hub::AdminRoutes OtaHandler::routes() {
  return hub::AdminRoutes{[](std::string_view path) { return parse_ota_path(path).has_value(); },
                          [this](const hub::AdminRequest& request) { return handle(request); }};
}

asio::awaitable<AdminAnswer> OtaHandler::handle(const hub::AdminRequest& request) {
  const std::optional<OtaPath> path = parse_ota_path(request.path);
  if (!path) co_return error_text(404, "404 page not found\n");
  AdminAnswer answered = co_await answer(request, *path);
  requests_.with({endpoint_label(path->endpoint), std::to_string(answered.status)}).inc();
  co_return answered;
}

asio::awaitable<AdminAnswer> OtaHandler::answer(const hub::AdminRequest& request,
                                                const OtaPath& path) {
  if (!hub::trusted_local_peer(request.peer_uid)) {
    YH_LOG(Warning) << "ota: refused " << request.path << " to "
                    << (request.peer_uid ? "uid " + std::to_string(*request.peer_uid)
                                         : std::string("a remote peer"));
    co_return error_text(403,
                         "the OTA endpoints are served only to root or the hub's own user on "
                         "this node\n");
  }
  const bool pods = path.endpoint == OtaPath::Endpoint::Pods;
  if (request.method != (pods ? verb::get : verb::post)) {
    co_return error_text(405, "405 method not allowed\n");
  }
  if (pods) co_return co_await list_pods();
  const std::optional<hub::ServerAddress> server = pick_server_();
  if (!server) {
    YH_LOG(Info) << "ota: " << request.path << " refused: node " << settings_.node_name
                 << " is disconnected from the cloud";
    co_return error_text(503, "OTA upgrade is not allowed when node is disconnected to cloud");
  }
  if (path.endpoint == OtaPath::Endpoint::Upgrade) co_return co_await upgrade(*server, path);
  co_return co_await image_pull(*server, path);
}

asio::awaitable<AdminAnswer> OtaHandler::list_pods() {
  if (store_ != nullptr) co_return json_ok(kubelet_pod_list(*store_));
  // No cache (cloud mode, or it could not be opened): the node's pods at the apiserver.
  const std::optional<hub::ServerAddress> server = pick_server_();
  if (!server) co_return error_text(500, "Get pod list failed");
  std::string target = "/api/v1/pods";
  base::append_query_param(target, "fieldSelector", "spec.nodeName=" + settings_.node_name);
  const hub::ApiCall list_call{verb::get, std::move(target)};
  auto listed = co_await call(*server, list_call);
  rapidjson::Document list;
  if (!listed || listed->status != 200 || !base::parse_json(listed->body, list) ||
      !list.IsObject() || !list.HasMember("items") || !list["items"].IsArray()) {
    YH_LOG(Warning) << "ota: listing the node's pods failed: "
                    << (listed ? api_error(*listed) : listed.error().message);
    co_return error_text(500, "Get pod list failed");
  }
  std::string out = R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":)";
  base::append_json(list["items"], &out);
  out += "}";
  co_return json_ok(std::move(out));
}

asio::awaitable<std::optional<AdminAnswer>> OtaHandler::read_pod(const hub::ServerAddress& server,
                                                                 const OtaPath& path,
                                                                 rapidjson::Document& pod) {
  const hub::ApiCall get_call{verb::get, pod_target(path)};
  auto got = co_await call(server, get_call);
  if (!got) co_return error_text(500, "Get pod failed, " + got.error().message);
  if (got->status != 200) co_return error_text(500, "Get pod failed, " + api_error(*got));
  if (!base::parse_json(got->body, pod) || !pod.IsObject()) {
    co_return error_text(500, "Get pod failed, the apiserver's answer is not a pod");
  }
  co_return std::nullopt;
}

asio::awaitable<AdminAnswer> OtaHandler::upgrade(const hub::ServerAddress& server,
                                                 const OtaPath& path) {
  rapidjson::Document pod;
  if (auto failed = co_await read_pod(server, path, pod)) co_return std::move(*failed);
  const std::string ref = path.namespace_name + "/" + path.pod_name;
  if (auto problem = pod_status_problem(pod, settings_.node_name)) {
    co_return error_text(403, "Pre check update pod failed, Failed to check pod " + ref +
                                  " status, error: " + *problem);
  }
  if (auto problem = image_ready_problem(pod)) {
    co_return error_text(403, "Pre check update pod failed, Failed to check pod " + ref +
                                  " image ready, error: " + *problem);
  }
  const std::optional<std::string> kind = first_owner_kind(pod);
  if (!kind) co_return error_text(400, "Pod has no owner references");
  if (*kind == "Node") co_return co_await upgrade_static_pod(server, path);
  if (*kind != "DaemonSet") {
    co_return error_text(400, "Not support ota upgrade pod type " + *kind);
  }
  // OnDelete: the DaemonSet controller creates the new version. Unlike upstream, only the pod
  // that was checked: a uid precondition.
  std::string options = R"({"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":)";
  rapidjson::Value uid(base::string_member(pod["metadata"], "uid").c_str(), pod.GetAllocator());
  base::append_json(uid, &options);
  options += "}}";
  const hub::ApiCall delete_call{verb::delete_, pod_target(path), options};
  auto deleted = co_await call(server, delete_call);
  if (!deleted || !success(deleted->status)) {
    YH_LOG(Error) << "ota: couldn't update pod " << ref << " because of can't delete, "
                  << (deleted ? api_error(*deleted) : deleted.error().message);
    co_return error_text(500, "Apply update failed");
  }
  YH_LOG(Info) << "ota: start updating pod " << ref;
  co_return json_ok("Start updating pod " + ref);
}

asio::awaitable<AdminAnswer> OtaHandler::upgrade_static_pod(const hub::ServerAddress& server,
                                                            const OtaPath& path) {
  const std::optional<std::string> set = static_set_name(path.pod_name, settings_.node_name);
  if (!set) {
    YH_LOG(Error) << "ota: static pod pre-check failed: " << path.pod_name
                  << " is not named <name>-" << settings_.node_name;
    co_return error_text(500, "Static pod pre-check failed");
  }
  const std::string config_map = std::string(kStaticSetConfigMapPrefix) + *set;
  const hub::ApiCall config_map_call{
      verb::get, "/api/v1/namespaces/" + path.namespace_name + "/configmaps/" + config_map};
  auto got = co_await call(server, config_map_call);
  if (got && got->status == 404) {
    co_return error_text(403, "Configmap for static pod does not exist");
  }
  rapidjson::Document cm;
  if (!got || got->status != 200 || !base::parse_json(got->body, cm) || !cm.IsObject()) {
    YH_LOG(Error) << "ota: static pod pre-check failed: reading configmap " << config_map << ": "
                  << (got ? api_error(*got) : got.error().message);
    co_return error_text(500, "Static pod pre-check failed");
  }
  // The YurtStaticSet controller writes one key, the manifest's name. Upstream takes any one
  // of several (Go's map order); the hub refuses to guess.
  const auto data = cm.FindMember("data");
  Status applied = make_error("configmap " + config_map + " must hold exactly one manifest");
  if (data != cm.MemberEnd() && data->value.IsObject() && data->value.MemberCount() == 1 &&
      data->value.MemberBegin()->value.IsString()) {
    const auto& entry = *data->value.MemberBegin();
    const std::string_view manifest(entry.name.GetString(), entry.name.GetStringLength());
    const std::string_view content(entry.value.GetString(), entry.value.GetStringLength());
    applied = content.empty()
                  ? make_error("empty manifest in configmap " + config_map)
                  : upgrade_static_pod_manifest(settings_.static_pods, manifest, content);
  }
  if (!applied) {
    YH_LOG(Error) << "ota: upgrading static pod " << path.namespace_name << "/" << path.pod_name
                  << " failed: " << applied.error().message;
    co_return error_text(500, "Apply update failed");
  }
  const std::string ref = path.namespace_name + "/" + path.pod_name;
  YH_LOG(Info) << "ota: start updating static pod " << ref;
  co_return json_ok("Start updating pod " + ref);
}

asio::awaitable<AdminAnswer> OtaHandler::image_pull(const hub::ServerAddress& server,
                                                    const OtaPath& path) {
  rapidjson::Document pod;
  if (auto failed = co_await read_pod(server, path, pod)) co_return std::move(*failed);
  const std::string ref = path.namespace_name + "/" + path.pod_name;
  if (auto problem = pod_status_problem(pod, settings_.node_name)) {
    co_return error_text(403, "Failed to check pod status " + ref + ", error: " + *problem);
  }
  std::string target = pod_target(path) + "/status";
  base::append_query_param(target, "fieldManager", "yurthub-ota");
  hub::ApiCall patch{verb::patch, std::move(target),
                     image_pull_patch(pod, base::rfc3339_utc(base::WallClock::unix_seconds()))};
  patch.content_type = "application/merge-patch+json";
  auto patched = co_await call(server, patch);
  if (!patched || !success(patched->status)) {
    YH_LOG(Error) << "ota: patch pod status for imagepull failed, "
                  << (patched ? api_error(*patched) : patched.error().message);
    co_return error_text(500, "Patch pod status for imagepull failed");
  }
  co_return json_ok("Image pre-pull requested for pod " + ref);
}

asio::awaitable<Result<hub::ApiAnswer>> OtaHandler::call(const hub::ServerAddress& server,
                                                         const hub::ApiCall& call) {
  hub::ApiCall sent = call;
  sent.agent = "ota";
  co_return co_await hub::api_call(co_await asio::this_coro::executor, server, tls_,
                                   std::move(sent), settings_.call_timeout);
}

}  // namespace yurthub::ota
