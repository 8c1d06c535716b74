// RequestInfo: what a request is, in Kubernetes terms (verb, group/version/resource, subresource,
// namespace, name, selectors, resourceVersion, timeoutSeconds) and who sent it (component = the
// User-Agent before its first '/', lowercased). classify_request() is a pure function implementing
// k8s.io/apiserver's RequestInfoFactory rules (docs/reference/yurthub.md §2.1) plus the hub's own
// fields. Called once per request by the proxy session; the cache and filters key on its result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace yurthub::kube {

// What a request does, as k8s.io/apiserver's RequestInfo names it. Resource requests: get, list,
// watch, create, update, patch, delete, deletecollection, proxy, or None for a method the apiserver
// has no verb for. Non-resource requests: the HTTP method (GET -> Get, POST -> Post, ...), with
// every method outside the list below as Other, so a client cannot mint metric label values.
enum class Verb : std::uint8_t {
  None,
  Get,
  List,
  Watch,
  Create,
  Update,
  Patch,
  Delete,
  DeleteCollection,
  Proxy,
  Post,     // non-resource only
  Put,      // non-resource only
  Head,     // non-resource only
  Options,  // non-resource only
  Other,    // non-resource only
};

// The apiserver's lowercase name ("get", "deletecollection", ...; "" for None, "other" for Other),
// used in metric labels, logs and Status messages.
std::string_view verb_name(Verb verb);

// create, update, patch, delete and deletecollection: the verbs that change objects.
bool is_write_verb(Verb verb);

struct RequestInfo {
  bool is_resource_request = false;
  std::string path;  // decoded URL path, without the query
  Verb verb = Verb::None;
  std::string api_prefix;   // "api" or "apis"
  std::string api_group;    // "" for the core group
  std::string api_version;  // "v1", "v1beta1", ...
  std::string namespace_name;
  std::string resource;
  std::string subresource;
  std::string name;  // also filled from fieldSelector=metadata.name=<x> on list/watch

  // Query parameters (decoded).
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;
  std::string continue_token;
  std::optional<std::int64_t> limit;
  std::optional<std::int64_t> timeout_seconds;
  bool allow_watch_bookmarks = false;

  std::string user_agent;    // lowercased, whole (the `client` label of YurtHub's metrics)
  std::string component;     // lowercased User-Agent before the first '/'; "" without a User-Agent
  std::string accept;        // the Accept header as sent (set by the session, not classify_request)
  std::string content_type;  // the Content-Type header as sent (likewise)

  bool is_watch() const { return verb == Verb::Watch; }
  // Watches, proxy and exec/attach/port-forward style requests stay open indefinitely.
  bool is_long_running() const;
};

// Classifies one request. `target` is the request-target as received (origin form, with query).
RequestInfo classify_request(std::string_view method, std::string_view target,
                             std::string_view user_agent);

// The origin form ("/path?query") of a request-target: itself when it starts with '/'; the path
// and query of an http or https absolute-form target ("http://host/path?query", which proxies
// must accept, RFC 9112 §3.2.2); nullopt for anything else ("*", authority form, and an absolute
// target that is not an RFC 3986 absolute-URI, such as one with an invalid %-escape, which Go's
// net/http refuses too). The hub classifies and forwards the origin form, so its decisions are
// about the path the apiserver acts on.
std::optional<std::string> origin_form(std::string_view target);

// Percent-decodes `text`; with `plus_is_space`, '+' decodes to ' ' (query strings, as Go's
// url.ParseQuery). Invalid escapes are kept literally.
std::string percent_decode(std::string_view text, bool plus_is_space);

// Calls `visit(key, value)` for each decoded `key=value` pair of a query string.
template <class Visitor>
void for_each_query_param(std::string_view query, Visitor&& visit) {
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    std::string key = percent_decode(pair.substr(0, eq), true);
    std::string value =
        eq == std::string_view::npos ? "" : percent_decode(pair.substr(eq + 1), true);
    visit(key, value);
  }
}

}  // namespace yurthub::kube
