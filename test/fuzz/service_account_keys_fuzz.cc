// Fuzz target for kube/service_account_keys.h: the apiserver's issuer-discovery documents (read
// from the network) and a client's bearer token (any caller on the node, offline). The input's
// three NUL-separated parts are the OpenID configuration, the JWKS and a token; the token is
// also checked against a fixed real key set (an RSA and an EC key made at start), so mutated
// tokens reach the signature, claim and leeway checks. Oracles: nothing crashes or leaks; a token
// that verifies was issued by the set's issuer, names an accepted audience and has not expired.
#include "kube/service_account_keys.h"

#include <algorithm>

#include "test/fuzz/fuzz_support.h"
#include "test/kube/token_signer.h"

using namespace yurthub;

namespace {

constexpr const char* kIssuer = "https://kubernetes.default.svc.cluster.local";
constexpr std::int64_t kNow = 1800000000;

const kube::ServiceAccountKeys& fixed_keys() {
  static const kube::ServiceAccountKeys keys = [] {
    test_support::Key rsa(EVP_RSA_gen(2048));
    test_support::Key ec(EVP_EC_gen("P-256"));
    auto parsed =
        kube::ServiceAccountKeys::parse(R"({"issuer":")" + std::string(kIssuer) + R"("})",
                                        R"({"keys":[)" + test_support::rsa_jwk(rsa.get(), "r") +
                                            "," + test_support::ec_jwk(ec.get(), "e") + "]}");
    fuzz::check(parsed.ok(), "the fixed key set does not parse");
    return std::move(*parsed);
  }();
  return keys;
}

void check_verified(const kube::ServiceAccountKeys& keys, std::string_view token) {
  auto claims = keys.verify(token, kNow, {});
  if (!claims) return;
  fuzz::check(claims->issuer == keys.issuer(), "verified a token of another issuer");
  fuzz::check(std::find(claims->audiences.begin(), claims->audiences.end(), keys.issuer()) !=
                  claims->audiences.end(),
              "verified a token for another audience");
  fuzz::check(claims->expires && kNow < *claims->expires + 60, "verified an expired token");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::split_parts(fuzz::as_text(data, size), 3);
  if (auto keys = kube::ServiceAccountKeys::parse(parts[0], parts[1])) {
    fuzz::check(keys->size() > 0 && keys->size() <= kube::ServiceAccountKeys::kMaxKeys,
                "a parsed key set out of its bounds");
    check_verified(*keys, parts[2]);
  }
  check_verified(fixed_keys(), parts[2]);
  return 0;
}
