// Request target parsing; see request_path.h. Path rules follow k8s.io/apiserver's
// RequestInfoFactory: `namespaces/{ns}` alone names a Namespace object, `namespaces/{ns}/status`
// and `/finalize` are its subresources, anything else after `namespaces/{ns}` is a namespaced
// resource.
#include "test/fake_apiserver/request_path.h"

namespace yurthub::fake {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::vector<std::string> split_segments(std::string_view path) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string_view::npos) next = path.size();
    if (next > pos) out.push_back(url_decode(path.substr(pos, next - pos)));
    pos = next + 1;
  }
  return out;
}

// Fills resource/name/subresource from the segments after `namespaces/{ns}` or the group version.
bool fill_resource(ApiPath& p, const std::vector<std::string>& seg, size_t i) {
  size_t left = seg.size() - i;
  if (left == 0 || left > 3) return false;
  p.resource = seg[i];
  if (left >= 2) p.name = seg[i + 1];
  if (left == 3) p.subresource = seg[i + 2];
  return true;
}

}  // namespace

std::string url_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 &&
               hex_value(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

Query Query::parse(std::string_view raw) {
  Query q;
  size_t pos = 0;
  while (pos < raw.size()) {
    size_t amp = raw.find('&', pos);
    if (amp == std::string_view::npos) amp = raw.size();
    std::string_view part = raw.substr(pos, amp - pos);
    if (!part.empty()) {
      size_t eq = part.find('=');
      std::string_view k = part.substr(0, eq);
      std::string_view v = eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1);
      q.params_.emplace_back(url_decode(k), url_decode(v));
    }
    pos = amp + 1;
  }
  return q;
}

std::optional<std::string> Query::get(std::string_view name) const {
  for (const auto& [k, v] : params_) {
    if (k == name) return v;
  }
  return std::nullopt;
}

std::string Query::value(std::string_view name) const { return get(name).value_or(""); }

std::vector<std::string> Query::all(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : params_) {
    if (k == name) out.push_back(v);
  }
  return out;
}

bool Query::flag(std::string_view name) const {
  auto v = get(name);
  if (!v) return false;
  return *v == "1" || *v == "t" || *v == "T" || *v == "true" || *v == "TRUE" || *v == "True";
}

void Query::set(std::string_view name, std::string value) {
  std::erase_if(params_, [&](const auto& kv) { return kv.first == name; });
  params_.emplace_back(std::string(name), std::move(value));
}

void split_target(std::string_view target, std::string_view& path, std::string_view& query) {
  size_t q = target.find('?');
  if (q == std::string_view::npos) {
    path = target;
    query = {};
  } else {
    path = target.substr(0, q);
    query = target.substr(q + 1);
  }
}

std::optional<ApiPath> parse_api_path(std::string_view path) {
  std::vector<std::string> seg = split_segments(path);
  ApiPath p;
  size_t i = 0;
  if (seg.size() >= 2 && seg[0] == "api") {
    p.version = seg[1];
    i = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis") {
    p.group = seg[1];
    p.version = seg[2];
    i = 3;
  } else {
    return std::nullopt;
  }
  if (i == seg.size()) return p;  // group-version discovery
  if (seg[i] == "watch") {
    p.watch_prefix = true;
    ++i;
    if (i == seg.size()) return std::nullopt;
  }
  if (seg[i] == "namespaces" && seg.size() - i >= 2) {
    size_t left = seg.size() - i;
    bool ns_sub = left == 3 && (seg[i + 2] == "status" || seg[i + 2] == "finalize");
    if (left == 2 || ns_sub) {
      if (!fill_resource(p, seg, i)) return std::nullopt;
      return p;
    }
    p.ns = seg[i + 1];
    if (!fill_resource(p, seg, i + 2)) return std::nullopt;
    return p;
  }
  if (!fill_resource(p, seg, i)) return std::nullopt;
  return p;
}

}  // namespace yurthub::fake
