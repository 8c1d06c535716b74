// Service-account token keys and the offline check of a token's signature; see
// service_account_keys.h.
#include "kube/service_account_keys.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <algorithm>

#include <rapidjson/document.h>

#include "base/base64.h"
#include "base/json_parse.h"

namespace yurthub::kube {
namespace {

using base::string_member;

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using BignumPtr = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;
using ParamBuildPtr = std::unique_ptr<OSSL_PARAM_BLD, Deleter<OSSL_PARAM_BLD, OSSL_PARAM_BLD_free>>;
using ParamsPtr = std::unique_ptr<OSSL_PARAM, Deleter<OSSL_PARAM, OSSL_PARAM_free>>;
using ContextPtr = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;
using DigestContextPtr = std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX, EVP_MD_CTX_free>>;
using SignaturePtr = std::unique_ptr<ECDSA_SIG, Deleter<ECDSA_SIG, ECDSA_SIG_free>>;

// A curve the apiserver signs with: its JWK name, OpenSSL group, coordinate size and algorithm.
struct Curve {
  std::string_view jwk, group;
  std::size_t bytes;
  std::string_view alg;
};
constexpr Curve kCurves[] = {{"P-256", "prime256v1", 32, "ES256"},
                             {"P-384", "secp384r1", 48, "ES384"},
                             {"P-521", "secp521r1", 66, "ES512"}};

KeyPtr key_from_params(const char* type, OSSL_PARAM_BLD* build) {
  ParamsPtr params(OSSL_PARAM_BLD_to_param(build));
  ContextPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  EVP_PKEY* key = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) <= 0 ||
      EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params.get()) <= 0) {
    return nullptr;
  }
  return KeyPtr(key);
}

KeyPtr rsa_key(const rapidjson::Value& jwk) {
  auto n = base::decode_base64url(string_member(jwk, "n"));
  auto e = base::decode_base64url(string_member(jwk, "e"));
  if (!n || !e || n->empty() || e->empty() || n->size() > 1024 || e->size() > 8) return nullptr;
  BignumPtr bn_n(BN_bin2bn(reinterpret_cast<const unsigned char*>(n->data()),
                           static_cast<int>(n->size()), nullptr));
  BignumPtr bn_e(BN_bin2bn(reinterpret_cast<const unsigned char*>(e->data()),
                           static_cast<int>(e->size()), nullptr));
  ParamBuildPtr build(OSSL_PARAM_BLD_new());
  if (!bn_n || !bn_e || !build ||
      !OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) ||
      !OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get())) {
    return nullptr;
  }
  return key_from_params("RSA", build.get());
}

KeyPtr ec_key(const rapidjson::Value& jwk, const Curve& curve) {
  auto x = base::decode_base64url(string_member(jwk, "x"));
  auto y = base::decode_base64url(string_member(jwk, "y"));
  if (!x || !y || x->size() != curve.bytes || y->size() != curve.bytes) return nullptr;
  const std::string point = std::string(1, '\x04') + *x + *y;  // uncompressed
  const std::string group(curve.group);
  ParamBuildPtr build(OSSL_PARAM_BLD_new());
  if (!build ||
      !OSSL_PARAM_BLD_push_utf8_string(build.get(), OSSL_PKEY_PARAM_GROUP_NAME, group.c_str(), 0) ||
      !OSSL_PARAM_BLD_push_octet_string(build.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                        point.size())) {
    return nullptr;
  }
  return key_from_params("EC", build.get());
}

const EVP_MD* digest_of(std::string_view alg) {
  if (alg.ends_with("256")) return EVP_sha256();
  if (alg.ends_with("384")) return EVP_sha384();
  if (alg.ends_with("512")) return EVP_sha512();
  return nullptr;
}

// JWS's raw r||s as the DER ECDSA-Sig-Value OpenSSL verifies.
std::string der_signature(std::string_view raw) {
  const int half = static_cast<int>(raw.size() / 2);
  BignumPtr r(BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data()), half, nullptr));
  BignumPtr s(BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data()) + half, half, nullptr));
  SignaturePtr sig(ECDSA_SIG_new());
  if (!r || !s || !sig || ECDSA_SIG_set0(sig.get(), r.get(), s.get()) != 1) return {};
  (void)r.release();  // owned by sig now
  (void)s.release();
  const int length = i2d_ECDSA_SIG(sig.get(), nullptr);
  if (length <= 0) return {};
  std::string der(static_cast<std::size_t>(length), '\0');
  auto* out = reinterpret_cast<unsigned char*>(der.data());
  if (i2d_ECDSA_SIG(sig.get(), &out) != length) return {};
  return der;
}

}  // namespace

struct ServiceAccountKeys::Key {
  std::string kid;
  std::string alg;                  // the only algorithm this key verifies
  std::size_t signature_bytes = 0;  // EC: the raw r||s size; RSA: 0 (any)
  KeyPtr key;
};

Result<ServiceAccountKeys> ServiceAccountKeys::parse(std::string_view configuration,
                                                     std::string_view jwks) {
  rapidjson::Document config, set;
  if (!base::parse_json(configuration, config) || !config.IsObject()) {
    return make_error(ErrorCode::InvalidArgument, "the OpenID configuration is not a JSON object");
  }
  ServiceAccountKeys out;
  out.issuer_ = string_member(config, "issuer");
  if (out.issuer_.empty()) {
    return make_error(ErrorCode::InvalidArgument, "the OpenID configuration names no issuer");
  }
  if (!base::parse_json(jwks, set) || !set.IsObject() || !set.HasMember("keys") ||
      !set["keys"].IsArray()) {
    return make_error(ErrorCode::InvalidArgument, "the JWKS has no \"keys\" list");
  }
  for (const auto& jwk : set["keys"].GetArray()) {
    if (out.keys_.size() == kMaxKeys) break;
    const std::string kty = string_member(jwk, "kty");
    const std::string use = string_member(jwk, "use");
    if (!use.empty() && use != "sig") continue;
    auto key = std::make_shared<Key>();
    key->kid = string_member(jwk, "kid");
    if (kty == "RSA") {
      key->alg = string_member(jwk, "alg");
      if (key->alg.empty()) key->alg = "RS256";
      if (key->alg != "RS256" && key->alg != "RS384" && key->alg != "RS512") continue;
      key->key = rsa_key(jwk);
    } else if (kty == "EC") {
      const std::string crv = string_member(jwk, "crv");
      for (const Curve& c : kCurves) {
        if (c.jwk != crv) continue;
        key->alg = std::string(c.alg);
        key->signature_bytes = 2 * c.bytes;
        key->key = ec_key(jwk, c);
      }
      const std::string alg = string_member(jwk, "alg");
      if (!alg.empty() && alg != key->alg) continue;
    }
    if (key->key) out.keys_.push_back(std::move(key));
  }
  if (out.keys_.empty()) {
    return make_error(ErrorCode::InvalidArgument, "the JWKS has no RSA or EC signing key");
  }
  return out;
}

Result<TokenClaims> ServiceAccountKeys::verify(std::string_view token, std::int64_t now,
                                               const std::vector<std::string>& audiences) const {
  if (token.size() > kMaxTokenBytes) return make_error("the token is too long");
  const auto first = token.find('.');
  const auto second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos)
    return make_error("the token is not a JWT");
  auto header_json = base::decode_base64url(token.substr(0, first));
  auto signature = base::decode_base64url(token.substr(second + 1));
  rapidjson::Document header;
  if (!header_json || !signature || !base::parse_json(*header_json, header) || !header.IsObject()) {
    return make_error("the token's header or signature cannot be read");
  }
  const std::string alg = string_member(header, "alg");
  const std::string kid = string_member(header, "kid");
  const std::string_view signed_part = token.substr(0, second);
  bool verified = false;
  for (const auto& key : keys_) {
    if (key->alg != alg || (!kid.empty() && !key->kid.empty() && key->kid != kid)) continue;
    std::string sig = *signature;
    if (key->signature_bytes != 0) {
      if (sig.size() != key->signature_bytes) continue;
      sig = der_signature(sig);
      if (sig.empty()) continue;
    }
    DigestContextPtr ctx(EVP_MD_CTX_new());
    if (ctx &&
        EVP_DigestVerifyInit(ctx.get(), nullptr, digest_of(alg), nullptr, key->key.get()) == 1 &&
        EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                         reinterpret_cast<const unsigned char*>(signed_part.data()),
                         signed_part.size()) == 1) {
      verified = true;
      break;
    }
  }
  if (!verified) return make_error("the token is not signed by any of the issuer's keys");
  auto claims = read_jwt_claims(token);
  if (!claims) return make_error("the token's claims cannot be read");
  if (claims->issuer != issuer_) return make_error("the token was issued by " + claims->issuer);
  const std::vector<std::string> fallback = {issuer_};
  const auto& wanted = audiences.empty() ? fallback : audiences;
  const bool audience_ok = std::any_of(wanted.begin(), wanted.end(), [&](const std::string& a) {
    return std::find(claims->audiences.begin(), claims->audiences.end(), a) !=
           claims->audiences.end();
  });
  if (!audience_ok) return make_error("the token is not meant for this cluster's apiserver");
  constexpr std::int64_t kLeeway = 60;  // go-jose's DefaultLeeway, as the apiserver uses it
  if (!claims->expires || now >= *claims->expires + kLeeway) {
    return make_error(ErrorCode::PermissionDenied, "the token has expired");
  }
  if (claims->not_before && now + kLeeway < *claims->not_before) {
    return make_error("the token is not valid yet");
  }
  return std::move(*claims);
}

}  // namespace yurthub::kube
