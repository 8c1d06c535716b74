// Request dispatch; see router.h.
#include "test/fake_apiserver/router.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include <boost/beast/websocket/rfc6455.hpp>

#include "base/log.h"
#include "test/fake_apiserver/bootstrap_token.h"
#include "test/fake_apiserver/churn.h"
#include "test/fake_apiserver/discovery.h"
#include "test/fake_apiserver/exec.h"
#include "test/fake_apiserver/openapi.h"
#include "test/fake_apiserver/service_account_token.h"

namespace yurthub::fake {

namespace asio = boost::asio;
using Request = http::request<http::string_body>;

constexpr std::string_view kClusterInfoPath =
    "/api/v1/namespaces/kube-public/configmaps/cluster-info";

enum class Verb {
  None,
  Get,
  List,
  Watch,
  Create,
  Update,
  Patch,
  Delete,
  DeleteCollection,
  Exec,
  Log,
  Review,
  Token
};

struct Router::Routed {
  ApiRequest api;
  Verb verb = Verb::None;
};

namespace {

// The media type of a Content-Type header: before any ';', trimmed, lower case
// ("application/merge-patch+json; charset=utf-8" is application/merge-patch+json).
std::string media_type(std::string_view content_type) {
  content_type = content_type.substr(0, content_type.find(';'));
  while (!content_type.empty() && (content_type.front() == ' ' || content_type.front() == '\t')) {
    content_type.remove_prefix(1);
  }
  while (!content_type.empty() && (content_type.back() == ' ' || content_type.back() == '\t')) {
    content_type.remove_suffix(1);
  }
  std::string out(content_type);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const char* verb_name(Verb v) {
  switch (v) {
    case Verb::Get:
    case Verb::Log:
      return "get";
    case Verb::List:
      return "list";
    case Verb::Watch:
      return "watch";
    case Verb::Create:
    case Verb::Exec:
    case Verb::Review:
    case Verb::Token:
      return "create";
    case Verb::Update:
      return "update";
    case Verb::Patch:
      return "patch";
    case Verb::Delete:
      return "delete";
    case Verb::DeleteCollection:
      return "deletecollection";
    case Verb::None:
      break;
  }
  return "";
}

Verb verb_for(http::verb method, const ApiPath& p, const Query& q, const ResourceInfo& r) {
  bool named = !p.name.empty();
  const std::string& sub = p.subresource;
  if (sub == "exec")
    return method == http::verb::get || method == http::verb::post ? Verb::Exec : Verb::None;
  if (sub == "log") return method == http::verb::get ? Verb::Log : Verb::None;
  switch (method) {
    case http::verb::get:
      if (p.watch_prefix || (!named && q.flag("watch"))) return Verb::Watch;
      return named ? Verb::Get : Verb::List;
    case http::verb::post:
      if (named) return sub == "token" ? Verb::Token : Verb::None;
      return r.stored ? Verb::Create : Verb::Review;
    case http::verb::put:
      return named ? Verb::Update : Verb::None;
    case http::verb::patch:
      return named ? Verb::Patch : Verb::None;
    case http::verb::delete_:
      return named ? Verb::Delete : Verb::DeleteCollection;
    default:
      return Verb::None;
  }
}

bool verb_allowed(const ResourceInfo& r, const std::string& sub, Verb v) {
  std::string_view name = verb_name(v);
  const std::vector<std::string_view>* verbs = &r.verbs;
  for (const auto& s : r.subresources) {
    if (s.name == sub) verbs = &s.verbs;
  }
  return std::find(verbs->begin(), verbs->end(), name) != verbs->end();
}

bool is_health(std::string_view path) {
  for (std::string_view p : {"/healthz", "/livez", "/readyz"}) {
    if (path == p || (path.starts_with(p) && path[p.size()] == '/')) return true;
  }
  return false;
}

void log_request(const Request& req, const std::string& user, unsigned code) {
  YH_LOG(Info) << req.method_string() << " " << req.target()
               << " user=" << (user.empty() ? "-" : user) << " " << code;
}

}  // namespace

Identity Router::authenticate(const Request& req, const Identity& cert) const {
  // kube-apiserver's union authenticator asks x509 before the token authenticators and takes
  // the first success: a verified client certificate wins over any bearer token.
  if (!cert.user.empty()) return cert;
  std::string token = bearer_token(req[http::field::authorization]);
  if (token.empty()) {
    // No credentials at all: the anonymous authenticator. kubeadm's RBAC lets system:anonymous
    // get only the cluster-info ConfigMap (token discovery); the fake answers 401 elsewhere.
    std::string_view path, query;
    split_target(req.target(), path, query);
    if (req.method() == http::verb::get && path == kClusterInfoPath) {
      return Identity{"system:anonymous", "", {"system:unauthenticated"}};
    }
    return cert;
  }
  const Identity* id = tokens_ != nullptr ? tokens_->find(token) : nullptr;
  if (id != nullptr) return *id;
  // The service-account authenticator comes next in kube-apiserver's token union.
  if (config_.service_account_key != nullptr) {
    auto account = authenticate_service_account_token(store_, *config_.service_account_key, token,
                                                      std::chrono::system_clock::now());
    if (account) return *account;
  }
  // Then the bootstrap token authenticator, over the kube-system Secrets in the store.
  auto bootstrap = authenticate_bootstrap_token(store_, token, std::chrono::system_clock::now());
  return bootstrap ? *bootstrap : Identity{};
}

Identity Router::impersonate(const Request& req, Identity who) const {
  // Impersonate-User / Impersonate-Group, as kube-apiserver's impersonation filter: this fake
  // authorizes every user, so every authenticated caller may impersonate.
  auto user = req.find("Impersonate-User");
  if (!who.authenticated() || who.user == "system:anonymous" || user == req.end()) return who;
  Identity as;
  as.user = std::string(user->value());
  for (const auto& field : req) {
    if (boost::beast::iequals(field.name_string(), "Impersonate-Group")) {
      as.groups.push_back(std::string(field.value()));
    }
  }
  return as;
}

std::optional<Reply> Router::classify(const Request& req, const Identity& who, Routed& out) const {
  std::string_view path, query;
  split_target(req.target(), path, query);
  auto p = parse_api_path(path);
  if (!p || p->resource.empty()) return path_not_found();
  const ResourceInfo* r = find_resource(p->group, p->version, p->resource);
  if (r == nullptr) return path_not_found();
  bool scope_ok = r->namespaced ? (p->name.empty() || !p->ns.empty()) : p->ns.empty();
  if (!scope_ok) return path_not_found();
  if (!p->subresource.empty() && !r->has_subresource(p->subresource)) return path_not_found();
  out.api = ApiRequest{r,
                       *p,
                       Query::parse(query),
                       req.body(),
                       media_type(req[http::field::content_type]),
                       who,
                       std::string(req[http::field::accept])};
  out.verb = verb_for(req.method(), *p, out.api.query, *r);
  if (out.verb == Verb::None || !verb_allowed(*r, p->subresource, out.verb)) {
    return method_not_allowed("the server does not allow this method on the requested resource");
  }
  if (out.verb == Verb::Watch && !p->name.empty()) {
    // Legacy /watch/.../NAME: a collection watch narrowed to the one name.
    std::string fs = "metadata.name=" + p->name;
    std::string extra = out.api.query.value("fieldSelector");
    out.api.query.set("fieldSelector", extra.empty() ? fs : fs + "," + extra);
    out.api.path.name.clear();
  }
  // selfsubjectreviews stays allowed: every authenticated user may ask who it is.
  if (config_.deny_users.count(who.user) > 0 && out.verb != Verb::Review) {
    std::string resource(r->name);
    if (!p->subresource.empty()) resource += "/" + p->subresource;
    return forbidden(who.user, verb_name(out.verb), r->group, resource, p->ns, p->name);
  }
  return std::nullopt;
}

Reply Router::route_resource(const Routed& r) {
  switch (r.verb) {
    case Verb::Get:
      return api_.get(r.api);
    case Verb::List:
      return api_.list(r.api);
    case Verb::Create:
      return api_.create(r.api);
    case Verb::Update:
      return api_.update(r.api);
    case Verb::Patch:
      return api_.patch(r.api);
    case Verb::Delete:
      return api_.remove(r.api);
    case Verb::DeleteCollection:
      return api_.remove_collection(r.api);
    case Verb::Log:
      return api_.pod_log(r.api);
    case Verb::Review:
      if (r.api.resource->name == "selfsubjectaccessreviews") {
        // As this fake authorizes: everything, except for --deny-user users.
        return api_.self_subject_access_review(r.api,
                                               config_.deny_users.count(r.api.user.user) == 0);
      }
      return api_.self_subject_review(r.api);
    case Verb::Token:
      return api_.token_request(r.api);
    default:
      return internal_error("unrouted verb");
  }
}

asio::awaitable<Next> Router::serve(TlsStream& stream, Request& req, const Identity& cert,
                                    std::function<void()>& closer) {
  bool keep_alive = req.keep_alive();
  std::string_view path, query;
  split_target(req.target(), path, query);
  Reply reply;
  Identity who;
  Routed routed;
  std::optional<std::string> discovery;
  if (is_health(path)) {
    reply = path.starts_with("/readyz") && unready_
                ? Reply{503, "text/plain; charset=utf-8", "[-]fake not ready (/_fake/ready)"}
                : Reply{200, "text/plain; charset=utf-8", "ok"};
  } else if (path == "/version") {
    reply = Reply{200, "application/json", version_body()};
  } else if (who = impersonate(req, authenticate(req, cert)); !who.authenticated()) {
    reply = unauthorized();
  } else if (config_.issuer_discovery != nullptr && IssuerDiscovery::serves(path)) {
    reply =
        config_.issuer_discovery->serve(req.method_string(), path, req[http::field::accept], who);
  } else if (path == "/_fake/churn" && req.method() == http::verb::post) {
    // Test control (churn.h): drive a stream of watch events.
    if (auto churn = parse_churn_query(query)) {
      auto executor = co_await asio::this_coro::executor;
      start_churn(executor, store_, std::move(*churn));
      reply = Reply{202, "application/json",
                    R"({"kind":"Status","apiVersion":"v1","status":"Success"})"};
    } else {
      reply = bad_request("churn needs positive objects and events");
    }
  } else if (path == "/_fake/ready" && req.method() == http::verb::post) {
    // Test control: /readyz answers 503 while ready=false, so a hub takes this apiserver as
    // unhealthy (offline) while tests still reach it directly.
    unready_ = query.find("ready=false") != std::string_view::npos;  // kubectl adds &timeout=
    reply =
        Reply{200, "application/json", R"({"kind":"Status","apiVersion":"v1","status":"Success"})"};
  } else if (req.method() == http::verb::get &&
             (discovery = discovery_document(path, config_.server_address))) {
    reply = Reply{200, "application/json", std::move(*discovery)};
  } else if (req.method() == http::verb::get && (discovery = openapi_v3_document(path))) {
    reply = Reply{200, "application/json", std::move(*discovery)};
  } else if (auto error = classify(req, who, routed)) {
    reply = std::move(*error);
  } else if (routed.verb == Verb::Watch) {
    auto plan = plan_watch(routed.api, config_.watch);
    if (auto* bad = std::get_if<Reply>(&plan)) {
      reply = std::move(*bad);
    } else {
      log_request(req, who.user, 200);
      // Named awaitables: g++ 12 mishandles temporaries inside a co_await expression.
      auto watch = serve_watch(stream, store_, routed.api, std::move(std::get<WatchPlan>(plan)),
                               config_.watch, keep_alive);
      bool reusable = co_await std::move(watch);
      co_return reusable ? Next::KeepAlive : Next::Close;
    }
  } else if (routed.verb == Verb::Exec) {
    const ApiRequest& a = routed.api;
    std::string protocol = choose_exec_protocol(req[http::field::sec_websocket_protocol]);
    if (store_.get(a.resource->key(), a.path.ns, a.path.name) == nullptr) {
      reply = not_found(a.resource->qualified(), a.resource->group, a.resource->name, a.path.name);
    } else if (!boost::beast::websocket::is_upgrade(req) || protocol.empty()) {
      reply = bad_request("Upgrade request required");
    } else {
      log_request(req, who.user, 101);
      auto exec =
          serve_exec(std::move(stream), std::move(req), protocol, a.query.all("command"), closer);
      co_await std::move(exec);
      co_return Next::HandedOff;
    }
  } else {
    reply = route_resource(routed);
  }
  log_request(req, who.user, reply.status);
  ErrorCode ec = co_await write_reply(stream, reply, keep_alive);
  co_return ec || !keep_alive ? Next::Close : Next::KeepAlive;
}

}  // namespace yurthub::fake
