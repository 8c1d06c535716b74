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

}  // namespace yurthub::kube
