// Parses a request target (`/api/v1/namespaces/default/pods/web-0/status?watch=1`) into the parts
// the fake apiserver routes on: API group/version, resource, namespace, name, subresource and the
// decoded query. Pure; used by server.cc and by the unit tests.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yurthub::fake {

// Decoded query parameters in request order (a name may repeat, e.g. `command`).
class Query {
 public:
  static Query parse(std::string_view raw);

  // The first value of `name`, or nullopt.
  std::optional<std::string> get(std::string_view name) const;
  // The first value of `name`, or "".
  std::string value(std::string_view name) const;
  std::vector<std::string> all(std::string_view name) const;
  // `watch=true`, `watch=1`: a Go strconv.ParseBool true value.
  bool flag(std::string_view name) const;
  // Replaces every value of `name` with one `value` (appends if absent).
  void set(std::string_view name, std::string value);

 private:
  std::vector<std::pair<std::string, std::string>> params_;
};

// Percent-decoding with `+` as space (Go's url.QueryUnescape). Invalid escapes stay literal.
std::string url_decode(std::string_view s);

struct ApiPath {
  std::string group;          // "" for /api
  std::string version;        // "v1"
  std::string resource;       // "pods"; "" for a group-version discovery request
  std::string ns;             // "" when not namespaced or all namespaces
  std::string name;           // "" for a collection
  std::string subresource;    // "status", "exec", "log" or ""
  bool watch_prefix = false;  // legacy /api/v1/watch/... form
};

// Splits a resource path (no query). nullopt if the path is not under /api/v1 or /apis/g/v, or
// has more segments than a resource path can.
std::optional<ApiPath> parse_api_path(std::string_view path);

// Splits a target into path and raw query.
void split_target(std::string_view target, std::string_view& path, std::string_view& query);

}  // namespace yurthub::fake
