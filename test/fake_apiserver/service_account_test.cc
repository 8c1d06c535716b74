// Unit tests for the fake's service-account tokens: the key (service_account_key.h) against the
// openssl command line (kid, JWK modulus, RS256 signature), the issuer discovery documents and
// their authorization (issuer_discovery.h, --issuer-discovery-groups), and the authenticator
// (service_account_token.h) on tokens issued by TokenRequest, altered, expired or outliving their
// pod. The key is made by `openssl genpkey` in a temporary directory.
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "base/base64.h"
#include "test/fake_apiserver/api_handlers.h"
#include "test/fake_apiserver/issuer_discovery.h"
#include "test/fake_apiserver/json_util.h"
#include "test/fake_apiserver/options.h"
#include "test/fake_apiserver/service_account_key.h"
#include "test/fake_apiserver/service_account_token.h"

namespace yurthub::fake {
namespace {

using Clock = std::chrono::system_clock;

// The standard output of `sh -c command`, trailing newlines dropped.
std::string run(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buf;
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

void write_file(const std::string& path, std::string_view data) {
  std::ofstream(path, std::ios::binary) << data;
}

std::string hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

class ServiceAccountTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/fake-sa-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    run("openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out " + dir_ +
        "/sa.key 2>/dev/null");
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  void SetUp() override {
    auto key = ServiceAccountKey::load(dir_ + "/sa.key");
    ASSERT_TRUE(key) << key.error().message;
    key_ = std::make_unique<ServiceAccountKey>(std::move(*key));
    api_.set_service_account_key(key_.get());
  }

  ApiRequest request(const std::string& resource, const std::string& name,
                     const std::string& sub = "", const std::string& body = "") {
    ApiRequest req;
    req.resource = find_resource("", "v1", resource);
    req.path.version = "v1";
    req.path.resource = resource;
    req.path.ns = "default";
    req.path.name = name;
    req.path.subresource = sub;
    req.body = body;
    return req;
  }
  std::string create(const std::string& resource, const std::string& name) {
    Reply r = api_.create(request(resource, "", "", R"({"metadata":{"name":")" + name + "\"}}"));
    EXPECT_EQ(r.status, 201u) << r.body;
    return meta_string(parse_json(r.body).value(), "uid");
  }
  // A TokenRequest for default/web bound to pod web-0, as kubelet makes it.
  std::string issue(const std::string& pod_uid, const std::string& audience = "") {
    std::string aud = audience.empty() ? "" : R"("audiences":[")" + audience + R"("],)";
    Reply r = api_.token_request(
        request("serviceaccounts", "web", "token",
                R"({"spec":{)" + aud +
                    R"("expirationSeconds":3600,"boundObjectRef":{"kind":"Pod","apiVersion":"v1",)"
                    R"("name":"web-0","uid":")" +
                    pod_uid + R"("}}})"));
    EXPECT_EQ(r.status, 201u) << r.body;
    return parse_json(r.body).value()["status"]["token"].GetString();
  }
  std::optional<Identity> authenticate(const std::string& token, Clock::time_point now) {
    return authenticate_service_account_token(store_, *key_, token, now);
  }

  static std::string dir_;
  Store store_{100};
  ApiHandlers api_{store_};
  std::unique_ptr<ServiceAccountKey> key_;
};

std::string ServiceAccountTest::dir_;

TEST_F(ServiceAccountTest, KidIsTheSha256OfThePublicKeyDer) {
  const std::string expected =
      run("openssl pkey -in " + dir_ +
          "/sa.key -pubout -outform DER | openssl dgst -sha256 -binary | basenc --base64url | "
          "tr -d '='");
  ASSERT_EQ(expected.size(), 43u);
  EXPECT_EQ(key_->kid(), expected);
}

TEST_F(ServiceAccountTest, JwksHasTheApiserversFormat) {
  IssuerDiscovery discovery(*key_, kServiceAccountIssuer, {"system:serviceaccounts"});
  auto doc = parse_json(discovery.jwks()).value();
  ASSERT_TRUE(doc["keys"].IsArray());
  ASSERT_EQ(doc["keys"].Size(), 1u);
  const auto& jwk = doc["keys"][0];
  std::vector<std::string> names;
  for (const auto& m : jwk.GetObject()) names.emplace_back(m.name.GetString());
  EXPECT_EQ(names, (std::vector<std::string>{"use", "kty", "kid", "alg", "n", "e"}));
  EXPECT_EQ(std::string(jwk["use"].GetString()), "sig");
  EXPECT_EQ(std::string(jwk["kty"].GetString()), "RSA");
  EXPECT_EQ(std::string(jwk["kid"].GetString()), key_->kid());
  EXPECT_EQ(std::string(jwk["alg"].GetString()), "RS256");
  EXPECT_EQ(std::string(jwk["e"].GetString()), "AQAB");
  auto n = base::decode_base64url(jwk["n"].GetString());  // unpadded, or this fails
  ASSERT_TRUE(n);
  EXPECT_EQ(n->size(), 256u);
  EXPECT_EQ("Modulus=" + hex(*n), run("openssl rsa -in " + dir_ + "/sa.key -noout -modulus"));
  EXPECT_EQ(discovery.configuration(),
            R"({"issuer":"https://kubernetes.default.svc.cluster.local",)"
            R"("jwks_uri":"https://kubernetes.default.svc.cluster.local/openid/v1/jwks",)"
            R"("response_types_supported":["id_token"],"subject_types_supported":["public"],)"
            R"("id_token_signing_alg_values_supported":["RS256"]})");
}

TEST_F(ServiceAccountTest, SignatureVerifiesWithOpenssl) {
  const std::string token = key_->sign(R"({"sub":"x"})");
  const auto last = token.rfind('.');
  auto header = base::decode_base64url(token.substr(0, token.find('.')));
  ASSERT_TRUE(header);
  EXPECT_EQ(*header, R"({"alg":"RS256","kid":")" + key_->kid() + "\"}");
  auto sig = base::decode_base64url(token.substr(last + 1));
  ASSERT_TRUE(sig);
  write_file(dir_ + "/input", token.substr(0, last));
  write_file(dir_ + "/sig", *sig);
  const std::string d = dir_;
  run("openssl pkey -in " + d + "/sa.key -pubout -out " + d + "/pub.pem");
  EXPECT_EQ(run("openssl dgst -sha256 -verify " + d + "/pub.pem -signature " + d + "/sig " + d +
                "/input"),
            "Verified OK");
  EXPECT_TRUE(key_->verify(token));
  auto other = ServiceAccountKey::generate();
  ASSERT_TRUE(other);
  EXPECT_NE(other->kid(), key_->kid());
  EXPECT_FALSE(other->verify(token));
}

TEST_F(ServiceAccountTest, DiscoveryIsForServiceAccountsAndGrantedGroups) {
  const Identity node{"system:node:edge-node-1", "", {"system:nodes"}};
  const Identity account{"system:serviceaccount:default:web",
                         "",
                         {"system:serviceaccounts", "system:serviceaccounts:default"}};
  IssuerDiscovery defaults(*key_, kServiceAccountIssuer, {"system:serviceaccounts"});
  Reply denied = defaults.serve("GET", kJwksPath, "", node);
  EXPECT_EQ(denied.status, 403u);
  EXPECT_EQ(denied.body,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"forbidden: User \"system:node:edge-node-1\" cannot get path )"
            R"(\"/openid/v1/jwks\"","reason":"Forbidden","details":{},"code":403})");
  EXPECT_EQ(defaults.serve("GET", kOpenIdConfigurationPath, "", node).status, 403u);

  Reply jwks = defaults.serve("GET", kJwksPath, "application/json, */*", account);
  EXPECT_EQ(jwks.status, 200u);
  EXPECT_EQ(jwks.content_type, "application/jwk-set+json");
  EXPECT_EQ(jwks.headers, (HeaderList{{"Cache-Control", "public, max-age=3600"}}));
  EXPECT_EQ(jwks.body, defaults.jwks());
  Reply config = defaults.serve("GET", kOpenIdConfigurationPath, "application/json", account);
  EXPECT_EQ(config.status, 200u);
  EXPECT_EQ(config.content_type, "application/json");
  // go-restful: only the route's media type or */* is acceptable; only GET is routed.
  Reply not_acceptable = defaults.serve("GET", kJwksPath, "application/json", account);
  EXPECT_EQ(not_acceptable.status, 406u);
  EXPECT_EQ(not_acceptable.body,
            "406: Not Acceptable\n\nAvailable representations: application/jwk-set+json");
  EXPECT_EQ(defaults.serve("GET", kJwksPath, "application/jwk-set+json;q=0.9", account).status,
            200u);
  EXPECT_EQ(defaults.serve("POST", kJwksPath, "", account).status, 403u);
  Reply wrong_method = defaults.serve("POST", kJwksPath, "", {"admin", "", {"system:masters"}});
  EXPECT_EQ(wrong_method.status, 405u);
  EXPECT_EQ(wrong_method.headers, (HeaderList{{"Allow", "GET"}}));

  const char* argv[] = {"fake_apiserver", "--cert=c", "--key=k", "--client-ca=ca",
                        "--issuer-discovery-groups=system:serviceaccounts,system:nodes"};
  auto options = parse_options(5, argv);
  ASSERT_TRUE(options);
  IssuerDiscovery granted(
      *key_, kServiceAccountIssuer,
      {options->issuer_discovery_groups.begin(), options->issuer_discovery_groups.end()});
  EXPECT_EQ(granted.serve("GET", kJwksPath, "", node).status, 200u);
  EXPECT_EQ(granted.serve("GET", kOpenIdConfigurationPath, "", account).status, 200u);
  EXPECT_EQ(granted.serve("GET", kJwksPath, "", {"alice", "", {"team-a"}}).status, 403u);
}

TEST_F(ServiceAccountTest, IssuedTokensAuthenticateUntilAlteredExpiredOrUnbound) {
  const std::string account_uid = create("serviceaccounts", "web");
  const std::string pod_uid = create("pods", "web-0");
  const std::string token = issue(pod_uid);
  const auto now = Clock::now();

  auto id = authenticate(token, now);
  ASSERT_TRUE(id);
  EXPECT_EQ(id->user, "system:serviceaccount:default:web");
  EXPECT_EQ(id->uid, account_uid);
  EXPECT_EQ(id->groups,
            (std::vector<std::string>{"system:serviceaccounts", "system:serviceaccounts:default"}));

  // Altered claims (another service account) under the same signature, or an altered signature.
  const auto dot1 = token.find('.'), dot2 = token.rfind('.');
  std::string claims = base::decode_base64url(token.substr(dot1 + 1, dot2 - dot1 - 1)).value();
  claims.replace(claims.find(R"("name":"web")"), 12, R"("name":"xyz")");
  const std::string forged =
      token.substr(0, dot1 + 1) + base::encode_base64url(claims) + token.substr(dot2);
  EXPECT_FALSE(authenticate(forged, now));
  std::string bad_sig = token;
  bad_sig[dot2 + 5] = bad_sig[dot2 + 5] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(authenticate(bad_sig, now));
  EXPECT_FALSE(authenticate(ServiceAccountKey::generate()->sign(claims), now));

  // exp is an hour away; go-jose allows a minute of leeway past it.
  EXPECT_TRUE(authenticate(token, now + std::chrono::seconds(3600 + 30)));
  EXPECT_FALSE(authenticate(token, now + std::chrono::seconds(3600 + 90)));
  // A token for another audience is not the apiserver's to accept.
  EXPECT_FALSE(authenticate(issue(pod_uid, "vault"), now));

  // The bound pod deleted, then recreated under the same name with a new uid.
  EXPECT_EQ(api_.remove(request("pods", "web-0")).status, 200u);
  EXPECT_FALSE(authenticate(token, now));
  create("pods", "web-0");
  EXPECT_FALSE(authenticate(token, now));
  EXPECT_TRUE(authenticate(issue(""), now)) << "a token for the new pod";
}

}  // namespace
}  // namespace yurthub::fake
