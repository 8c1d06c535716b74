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
  std::string resource_version_match;       // "", "Exact", "NotOlderThan"
  std::optional<bool> send_initial_events;  // watch-list (1.27+), when the client asked
  // A shardSelector (1.36's alpha ShardedListAndWatch) was sent: the answer is a shard of what
  // the selectors name, which the hub never keeps or serves as the whole.
  bool sharded = false;

  std::string user_agent;    // lowercased, whole (the `client` label of YurtHub's metrics)
  std::string component;     // lowercased User-Agent before the first '/'; "" without a User-Agent
  std::string accept;        // the Accept header as sent (set by the session, not classify_request)
  std::string content_type;  // the Content-Type header as sent (likewise)
  // The caller's own credential, set by the session: the token of its `Authorization: Bearer`
  // header (kube::bearer_token; empty if the header has none), or nullopt when it sent none and
  // the hub lends it the node's identity. The cache keys what it keeps, and serves offline, by it.
  std::optional<std::string> bearer_token;
  // Set by the session: the connection comes from root or the hub's own user on this node
  // (hub/connection_limits.h). Its offline writes may use the whole journal; others only a share.
  bool privileged_peer = false;

  bool is_watch() const { return verb == Verb::Watch; }
  // Watches, proxy and exec/attach/port-forward style requests stay open indefinitely.
  bool is_long_running() const;
};

// Classifies one request. `target` is the request-target as received (origin form, with query).
// Its path is percent-decoded; a path with an invalid escape, which Go's net/http answers 400
// before the apiserver sees it, is classified as sent. Its query is read by for_each_query_param,
// and a repeated parameter counts with its first value, as the apiserver's conversions take it.
RequestInfo classify_request(std::string_view method, std::string_view target,
                             std::string_view user_agent);

// The origin form ("/path?query") of a request-target: itself when it starts with '/'; the path
// and query of an http or https absolute-form target ("http://host/path?query", which proxies
// must accept, RFC 9112 §3.2.2); nullopt for anything else ("*", authority form, and an absolute
// target that is not an RFC 3986 absolute-URI, such as one with an invalid %-escape, which Go's
// net/http refuses too). The hub classifies and forwards the origin form, so its decisions are
// about the path the apiserver acts on.
std::optional<std::string> origin_form(std::string_view target);

// One key or value of a query, decoded as Go's url.QueryUnescape does: %XX escapes, and '+' as a
// space. nullopt when `text` has an invalid escape ("%zz", a lone '%'). The result views `text`
// when there is nothing to decode, and otherwise `scratch`, which it overwrites.
std::optional<std::string_view> query_unescape(std::string_view text, std::string& scratch);

// Calls `visit(key, value)` with each decoded pair of a query string (std::string_views, valid
// during the call only), in order, as Go's url.ParseQuery reads it and so the apiserver (through
// net/http's URL.Query()): pairs are separated by '&' and split at their first '=' (a bare "key"
// has the value ""). Empty pairs ("&&") are skipped, and so is a pair with a ';' or an invalid
// escape: ParseQuery reports an error for it and goes on, and URL.Query() drops the error, so
// the apiserver acts as if the pair were absent. The split into pairs is Go's, not Boost.URL's
// params view: parse_query refuses a whole query for one bad escape or for a byte RFC 3986 does
// not allow in a query ('|', '{', '"', ...), which Go takes as it is. Allocates only when a
// decoded key or value outgrows std::string's inline buffer (kept for the whole query).
template <class Visitor>
void for_each_query_param(std::string_view query, Visitor&& visit) {
  std::string key_scratch;
  std::string value_scratch;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty() || pair.find(';') != std::string_view::npos) continue;
    const auto eq = pair.find('=');
    const auto key = query_unescape(pair.substr(0, eq), key_scratch);
    const auto value = query_unescape(
        eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1), value_scratch);
    if (key && value) visit(*key, *value);
  }
}

}  // namespace yurthub::kube
