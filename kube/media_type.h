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

}  // namespace yurthub::kube
