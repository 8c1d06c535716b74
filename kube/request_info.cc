// RequestInfo classification; see request_info.h. The rules mirror k8s.io/apiserver
// pkg/endpoints/request/requestinfo.go (NewRequestInfo) so the hub's view of a request is the
// apiserver's view.
#include "kube/request_info.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <span>

#include <boost/container/small_vector.hpp>
#include <boost/url/encoding_opts.hpp>
#include <boost/url/grammar/string_token.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/pct_string_view.hpp>
#include <boost/url/scheme.hpp>
#include <boost/url/url_view.hpp>

namespace yurthub::kube {

namespace urls = boost::urls;

namespace {

// ASCII lowercase (Go's strings.ToLower on the ASCII methods and User-Agents classified here).
std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// strings.Split(strings.Trim(path, "/"), "/"), with the empty path giving no parts. The parts
// view `path`.
// Inline room for the parts of any resource path (at most 10 are read), so none allocates.
using PathParts = boost::container::small_vector<std::string_view, 12>;

PathParts split_path(std::string_view path) {
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  PathParts parts;
  if (path.empty()) return parts;
  std::size_t start = 0;
  while (true) {
    auto slash = path.find('/', start);
    parts.emplace_back(path.substr(start, slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

// Kubernetes' query-string bool conversion (Convert_Slice_string_To_bool): only "0", "f",
// "false", "n" and "no" (any case) are false; anything else, including "", is true.
bool query_bool(std::string_view value) {
  const std::string v = to_lower(value);
  return !(v == "0" || v == "f" || v == "false" || v == "n" || v == "no");
}

std::optional<std::int64_t> query_int(std::string_view value) {
  std::int64_t out = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc{} || ptr != value.data() + value.size()) return std::nullopt;
  return out;
}

// A client's timeoutSeconds, at most a day: the hub adds margins to it and turns it into a
// deadline, which a value near INT64_MAX would overflow.
std::optional<std::int64_t> clamped_timeout(std::optional<std::int64_t> seconds) {
  constexpr std::int64_t kMaxTimeoutSeconds = 24 * 3600;
  if (!seconds) return seconds;
  return std::min(*seconds, kMaxTimeoutSeconds);
}

// fields.Selector.RequiresExactMatch("metadata.name"): the value of a `metadata.name=x` or
// `metadata.name==x` term, if the selector has one.
std::optional<std::string> exact_metadata_name(std::string_view selector) {
  static constexpr std::string_view kField = "metadata.name";
  std::size_t start = 0;
  while (start <= selector.size()) {
    // Terms are comma separated; `\,` escapes a comma inside a value.
    std::size_t end = start;
    while (end < selector.size() &&
           !(selector[end] == ',' && (end == 0 || selector[end - 1] != '\\')))
      ++end;
    std::string_view term = selector.substr(start, end - start);
    if (term.substr(0, kField.size()) == kField) {
      std::string_view rest = term.substr(kField.size());
      if (rest.substr(0, 2) == "==") return std::string(rest.substr(2));
      if (rest.substr(0, 1) == "=") return std::string(rest.substr(1));
    }
    start = end + 1;
  }
  return std::nullopt;
}

// path.IsValidPathSegmentName: not "." or "..", and no '/' or '%'.
bool valid_path_segment_name(std::string_view name) {
  return name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('%') == std::string_view::npos;
}

// The parameters classification reads. A repeated one counts with its first value, as in the
// apiserver: url.Values keeps them in order and its query conversions
// (Convert_Slice_string_To_string, _bool, _int64, the selectors') take in[0].
void parse_query(std::string_view query, RequestInfo& info, bool& watch) {
  enum Seen : unsigned {
    kWatch = 1U << 0,
    kLabelSelector = 1U << 1,
    kFieldSelector = 1U << 2,
    kResourceVersion = 1U << 3,
    kContinue = 1U << 4,
    kLimit = 1U << 5,
    kTimeoutSeconds = 1U << 6,
    kAllowWatchBookmarks = 1U << 7,
    kResourceVersionMatch = 1U << 8,
    kSendInitialEvents = 1U << 9,
  };
  unsigned seen = 0;
  auto first = [&seen](Seen param) {
    const bool is_first = (seen & param) == 0;
    seen |= param;
    return is_first;
  };
  for_each_query_param(query, [&](std::string_view key, std::string_view value) {
    if (key == "watch" && first(kWatch))
      watch = query_bool(value);
    else if (key == "labelSelector" && first(kLabelSelector))
      info.label_selector = value;
    else if (key == "fieldSelector" && first(kFieldSelector))
      info.field_selector = value;
    else if (key == "resourceVersion" && first(kResourceVersion))
      info.resource_version = value;
    else if (key == "continue" && first(kContinue))
      info.continue_token = value;
    else if (key == "limit" && first(kLimit))
      info.limit = query_int(value);
    else if (key == "timeoutSeconds" && first(kTimeoutSeconds))
      info.timeout_seconds = clamped_timeout(query_int(value));
    else if (key == "allowWatchBookmarks" && first(kAllowWatchBookmarks))
      info.allow_watch_bookmarks = query_bool(value);
    else if (key == "resourceVersionMatch" && first(kResourceVersionMatch))
      info.resource_version_match = value;
    else if (key == "sendInitialEvents" && first(kSendInitialEvents))
      info.send_initial_events = query_bool(value);
    else if (key == "shardSelector" && !value.empty())
      info.sharded = true;
  });
}

Verb resource_verb_for_method(std::string_view method) {
  if (method == "POST") return Verb::Create;
  if (method == "GET" || method == "HEAD") return Verb::Get;
  if (method == "PUT") return Verb::Update;
  if (method == "PATCH") return Verb::Patch;
  if (method == "DELETE") return Verb::Delete;
  return Verb::None;
}

// A non-resource request's verb: its method, as the apiserver lowercases it.
Verb non_resource_verb_for_method(std::string_view method) {
  if (method == "GET") return Verb::Get;
  if (method == "POST") return Verb::Post;
  if (method == "PUT") return Verb::Put;
  if (method == "PATCH") return Verb::Patch;
  if (method == "DELETE") return Verb::Delete;
  if (method == "HEAD") return Verb::Head;
  if (method == "OPTIONS") return Verb::Options;
  return Verb::Other;
}

// Fills the resource fields from the parts after /api or /apis/<group>. REQUIRES: parts.size()
// >= 2.
void classify_resource(std::span<const std::string_view> parts, std::string_view method,
                       bool watch_param, RequestInfo& info) {
  info.is_resource_request = true;
  info.api_version = parts[0];
  parts = parts.subspan(1);

  if (parts[0] == "watch" || parts[0] == "proxy") {
    info.verb = parts[0] == "watch" ? Verb::Watch : Verb::Proxy;
    if (parts.size() < 2) return;  // "/api/v1/watch": the apiserver cannot classify it either
    parts = parts.subspan(1);
  } else {
    info.verb = resource_verb_for_method(method);
  }

  if (parts[0] == "namespaces") {
    if (parts.size() > 1) {
      info.namespace_name = parts[1];
      // namespaces/<ns>/<resource>/...: the resource is what follows, unless it is a subresource
      // of the namespace itself (status, finalize).
      if (parts.size() > 2 && parts[2] != "status" && parts[2] != "finalize") {
        parts = parts.subspan(2);
      }
    }
  }

  if (parts.size() >= 3 && info.verb != Verb::Proxy) info.subresource = parts[2];
  if (parts.size() >= 2) info.name = parts[1];
  if (!parts.empty()) info.resource = parts[0];

  if (info.name.empty() && info.verb == Verb::Get) {
    info.verb = watch_param ? Verb::Watch : Verb::List;
    if (auto name = exact_metadata_name(info.field_selector);
        name && valid_path_segment_name(*name)) {
      info.name = *name;
    }
  }
  if (info.name.empty() && info.verb == Verb::Delete) info.verb = Verb::DeleteCollection;
}

}  // namespace

std::string_view verb_name(Verb verb) {
  switch (verb) {
    case Verb::None:
      return "";
    case Verb::Get:
      return "get";
    case Verb::List:
      return "list";
    case Verb::Watch:
      return "watch";
    case Verb::Create:
      return "create";
    case Verb::Update:
      return "update";
    case Verb::Patch:
      return "patch";
    case Verb::Delete:
      return "delete";
    case Verb::DeleteCollection:
      return "deletecollection";
    case Verb::Proxy:
      return "proxy";
    case Verb::Post:
      return "post";
    case Verb::Put:
      return "put";
    case Verb::Head:
      return "head";
    case Verb::Options:
      return "options";
    case Verb::Other:
      return "other";
  }
  return "";
}

bool is_write_verb(Verb verb) {
  return verb == Verb::Create || verb == Verb::Update || verb == Verb::Patch ||
         verb == Verb::Delete || verb == Verb::DeleteCollection;
}

bool RequestInfo::is_long_running() const {
  if (verb == Verb::Watch || verb == Verb::Proxy) return true;
  return subresource == "exec" || subresource == "attach" || subresource == "portforward" ||
         subresource == "proxy" || (subresource == "log" && !resource.empty());
}

std::optional<std::string> origin_form(std::string_view target) {
  if (target.starts_with('/')) return std::string(target);
  // Only a target with an authority ("scheme://") is parsed: it is the only absolute form the hub
  // accepts, and Boost 1.81's hier-part rule trips an assertion on a one-byte path that is not a
  // pchar ("x:\x85"), which the authority's "//" rules out.
  const auto colon = target.find(':');
  if (colon == std::string_view::npos || target.substr(colon + 1, 2) != "//") return std::nullopt;
  const auto url = urls::parse_absolute_uri(target);
  if (!url || (url->scheme_id() != urls::scheme::http && url->scheme_id() != urls::scheme::https)) {
    return std::nullopt;
  }
  std::string origin;
  const urls::pct_string_view path_and_query = url->encoded_target();
  if (!path_and_query.starts_with('/')) origin.push_back('/');  // "http://host?x" is "/?x"
  origin += path_and_query;
  return origin;
}

std::optional<std::string_view> query_unescape(std::string_view text, std::string& scratch) {
  // The common case, with nothing to decode (a loop: find_first_of calls memchr per character).
  if (std::none_of(text.begin(), text.end(), [](char c) { return c == '%' || c == '+'; })) {
    return text;
  }
  const auto encoded = urls::make_pct_string_view(text);
  if (!encoded) return std::nullopt;
  urls::encoding_opts form;  // application/x-www-form-urlencoded, as ParseQuery: '+' is a space
  form.space_as_plus = true;
  encoded->decode(form, urls::string_token::assign_to(scratch));
  return scratch;
}

RequestInfo classify_request(std::string_view method, std::string_view target,
                             std::string_view user_agent) {
  RequestInfo info;
  info.user_agent = to_lower(user_agent);
  info.component = info.user_agent.substr(0, info.user_agent.find('/'));

  auto question = target.find('?');
  std::string_view raw_path = target.substr(0, question);
  std::string_view query =
      question == std::string_view::npos ? std::string_view{} : target.substr(question + 1);
  // A path with nothing to decode (the common case) skips Boost.URL's checks; an invalid escape
  // leaves the path as sent.
  info.path = raw_path;
  if (raw_path.find('%') != std::string_view::npos) {
    if (const auto encoded = urls::make_pct_string_view(raw_path)) info.path = encoded->decode();
  }
  info.verb = non_resource_verb_for_method(method);

  bool watch_param = false;
  parse_query(query, info, watch_param);

  const PathParts all = split_path(info.path);
  std::span<const std::string_view> parts(all);
  if (parts.size() < 3 || (parts[0] != "api" && parts[0] != "apis")) return info;
  info.api_prefix = parts[0];
  parts = parts.subspan(1);
  if (info.api_prefix == "apis") {
    if (parts.size() < 3) return info;  // /apis/<group>/<version>: discovery, not a resource
    info.api_group = parts[0];
    parts = parts.subspan(1);
  }
  classify_resource(parts, method, watch_param, info);
  return info;
}

}  // namespace yurthub::kube
