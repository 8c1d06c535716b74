// Bearer tokens and service-account JWT claims; see bearer_token.h.
#include "kube/bearer_token.h"

#include <rapidjson/document.h>

#include "base/base64.h"
#include "base/json_parse.h"

namespace yurthub::kube {
namespace {

using base::string_member;

// Go's strings.TrimSpace for the ASCII white space an HTTP header can hold.
std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const auto first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char x = static_cast<char>(a[i] >= 'A' && a[i] <= 'Z' ? a[i] + 32 : a[i]);
    if (x != b[i]) return false;
  }
  return true;
}

const rapidjson::Value* object_member(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(name);
  return it != object.MemberEnd() && it->value.IsObject() ? &it->value : nullptr;
}

}  // namespace

std::optional<std::string_view> bearer_token(std::string_view authorization) {
  const std::string_view value = trim(authorization);
  const auto space = value.find(' ');
  if (space == std::string_view::npos || !iequals(value.substr(0, space), "bearer"))
    return std::nullopt;
  const std::string_view rest = value.substr(space + 1);
  return rest.substr(0, rest.find(' '));
}

std::optional<TokenClaims> read_jwt_claims(std::string_view token) {
  const auto first = token.find('.');
  const auto second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos)
    return std::nullopt;
  // RFC 7515: base64url without padding.
  auto json = base::decode_base64url(token.substr(first + 1, second - first - 1));
  if (!json) return std::nullopt;
  rapidjson::Document payload;
  if (!base::parse_json(*json, payload) || !payload.IsObject()) return std::nullopt;
  TokenClaims claims;
  if (auto exp = payload.FindMember("exp"); exp != payload.MemberEnd() && exp->value.IsInt64())
    claims.expires = exp->value.GetInt64();
  if (auto nbf = payload.FindMember("nbf"); nbf != payload.MemberEnd() && nbf->value.IsInt64())
    claims.not_before = nbf->value.GetInt64();
  if (auto aud = payload.FindMember("aud"); aud != payload.MemberEnd()) {
    if (aud->value.IsString()) {
      claims.audiences.emplace_back(aud->value.GetString(), aud->value.GetStringLength());
    } else if (aud->value.IsArray()) {
      for (const auto& a : aud->value.GetArray()) {
        if (a.IsString() && claims.audiences.size() < 64)
          claims.audiences.emplace_back(a.GetString(), a.GetStringLength());
      }
    }
  }
  claims.issuer = string_member(payload, "iss");
  claims.subject = string_member(payload, "sub");
  if (const rapidjson::Value* k8s = object_member(payload, "kubernetes.io")) {
    claims.namespace_name = string_member(*k8s, "namespace");
    if (const rapidjson::Value* sa = object_member(*k8s, "serviceaccount")) {
      claims.service_account = string_member(*sa, "name");
      claims.service_account_uid = string_member(*sa, "uid");
    }
    if (const rapidjson::Value* pod = object_member(*k8s, "pod")) {
      claims.pod_name = string_member(*pod, "name");
      claims.pod_uid = string_member(*pod, "uid");
    }
  } else {  // a legacy token from a ServiceAccount's Secret
    claims.namespace_name = string_member(payload, "kubernetes.io/serviceaccount/namespace");
    claims.service_account =
        string_member(payload, "kubernetes.io/serviceaccount/service-account.name");
    claims.service_account_uid =
        string_member(payload, "kubernetes.io/serviceaccount/service-account.uid");
  }
  return claims;
}

}  // namespace yurthub::kube
