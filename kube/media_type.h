// Media types of response bodies the hub reads. Used by the hub's ResponsePlan: whether the
// cache and the filters may read a body.
#pragma once

#include <string_view>

namespace yurthub::kube {

// Plain JSON: `application/json` (or the issuer's `application/jwk-set+json`, a JSON document
// too), with parameters but no `as=` (a Table or another
// server-side conversion, which the cache and the filters cannot read as objects). The hub
// asks for JSON, but an apiserver may still answer with something else (a Table from an
// aggregated API, protobuf from an old one).
inline bool is_plain_json(std::string_view content_type) {
  const auto semicolon = content_type.find(';');
  const std::string_view media = content_type.substr(0, semicolon);
  if (media != "application/json" && media != "application/jwk-set+json") return false;
  return semicolon == std::string_view::npos ||
         content_type.find("as=", semicolon) == std::string_view::npos;
}

// Whether an Accept header names one JSON media type without parameters (application/json, or a
// route's own such as the issuer's application/jwk-set+json, which the apiserver answers 406 to
// application/json): the hub may then ask with it unchanged for an answer it reads. Anything else
// (protobuf, yaml, a Table or discovery format given by parameters, several types) is asked as
// application/json.
inline bool is_plain_json_accept(std::string_view accept) {
  return accept.find_first_of(",; ") == std::string_view::npos &&
         (accept.ends_with("/json") || accept.ends_with("+json"));
}

// Whether some media range of an Accept header (its type before any parameters, spaces trimmed)
// satisfies `wanted`.
template <class Wanted>
bool any_media_range(std::string_view accept, Wanted&& wanted) {
  while (!accept.empty()) {
    const auto comma = accept.find(',');
    std::string_view range = accept.substr(0, comma);
    accept = comma == std::string_view::npos ? std::string_view{} : accept.substr(comma + 1);
    range = range.substr(0, range.find(';'));
    while (!range.empty() && (range.front() == ' ' || range.front() == '\t'))
      range.remove_prefix(1);
    while (!range.empty() && (range.back() == ' ' || range.back() == '\t')) range.remove_suffix(1);
    if (wanted(range)) return true;
  }
  return false;
}

// Whether the answer may be JSON: no Accept (anything), or one naming `*/*`, `application/*` or
// a JSON type (kube-proxy and kubelet send `application/vnd.kubernetes.protobuf, */*`).
inline bool accepts_json(std::string_view accept) {
  if (accept.find_first_not_of(" \t") == std::string_view::npos) return true;
  return any_media_range(accept, [](std::string_view range) {
    return range == "*/*" || range == "application/*" || range == "application/json" ||
           range.ends_with("+json");
  });
}

// Whether a client with this Accept header takes the JSON the hub answers with itself (offline)
// or asks for in its place (a cached or filtered request): one that accepts JSON, or names
// protobuf (client-go, whose clients ask for it, decodes a response by its Content-Type and
// reads JSON too). False for an Accept of only other types, such as `application/cbor`
// (client-go's CBOR, off by default through 1.36) or YAML: offline such a request is answered
// 406, online it passes through untouched.
inline bool accepts_json_answer(std::string_view accept) {
  return accepts_json(accept) || any_media_range(accept, [](std::string_view range) {
           return range == "application/vnd.kubernetes.protobuf";
         });
}

}  // namespace yurthub::kube
