// Unit tests for the fake's certificate bootstrap support: CSR create validation and stamping
// (csr_validation.h, csr_handlers.cc), approval and signing (controllers.h, csr_signer.h; the
// issued certificate read back with OpenSSL), bootstrap token authentication and the cluster-info
// JWS (bootstrap_token.h, cluster_info.h). Keys, requests and the CA are made here with OpenSSL.
#include <chrono>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "base/base64.h"
#include "test/fake_apiserver/api_handlers.h"
#include "test/fake_apiserver/bootstrap_token.h"
#include "test/fake_apiserver/cluster_info.h"
#include "test/fake_apiserver/controllers.h"
#include "test/fake_apiserver/csr_validation.h"
#include "test/fake_apiserver/json_util.h"

namespace yurthub::fake {
namespace {

using Clock = std::chrono::system_clock;

std::string pem_of(int (*write)(BIO*, void*), void* obj) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  write(bio.get(), obj);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(len));
}

int write_req(BIO* b, void* r) { return PEM_write_bio_X509_REQ(b, static_cast<X509_REQ*>(r)); }
int write_x509(BIO* b, void* x) { return PEM_write_bio_X509(b, static_cast<X509*>(x)); }
int write_key(BIO* b, void* k) {
  return PEM_write_bio_PrivateKey(b, static_cast<EVP_PKEY*>(k), nullptr, nullptr, 0, nullptr,
                                  nullptr);
}

// A P-256 request for /O=.../CN=cn with optional SAN text ("DNS:a,IP:1.2.3.4").
std::string make_csr(const std::string& cn, const std::vector<std::string>& orgs,
                     const std::string& san = "") {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509_REQ* req = X509_REQ_new();
  X509_NAME* name = X509_REQ_get_subject_name(req);
  for (const auto& o : orgs) {
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(o.c_str()), -1, -1, 0);
  }
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  if (!san.empty()) {
    STACK_OF(X509_EXTENSION)* exts = sk_X509_EXTENSION_new_null();
    sk_X509_EXTENSION_push(
        exts, X509V3_EXT_conf_nid(nullptr, nullptr, NID_subject_alt_name, san.c_str()));
    X509_REQ_add_extensions(req, exts);
    sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
  }
  X509_REQ_set_pubkey(req, key);
  X509_REQ_sign(req, key, EVP_sha256());
  std::string pem = pem_of(write_req, req);
  X509_REQ_free(req);
  EVP_PKEY_free(key);
  return pem;
}

struct TestCa {
  std::string cert_pem, key_pem;
};

TestCa make_ca() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* ca = X509_new();
  X509_set_version(ca, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(ca), 1);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(ca), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("test-ca"), -1, -1, 0);
  X509_set_issuer_name(ca, X509_get_subject_name(ca));
  X509_gmtime_adj(X509_getm_notBefore(ca), -3600);
  X509_gmtime_adj(X509_getm_notAfter(ca), 10L * 365 * 24 * 3600);
  X509_set_pubkey(ca, key);
  X509_sign(ca, key, EVP_sha256());
  TestCa out{pem_of(write_x509, ca), pem_of(write_key, key)};
  X509_free(ca);
  EVP_PKEY_free(key);
  return out;
}

std::string csr_body(const std::string& request_pem, const std::string& signer,
                     const std::string& usages, const std::string& extra = "") {
  return R"({"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest",)"
         R"("metadata":{"generateName":"csr-"},"spec":{"request":")" +
         base::encode_base64(request_pem) + R"(","signerName":")" + signer + R"(","usages":)" +
         usages + extra + R"(,"username":"mallory","groups":["system:masters"]}})";
}

class CertificatesTest : public ::testing::Test {
 protected:
  void start(std::chrono::seconds lifetime = std::chrono::seconds(31536000),
             bool auto_approve = false, bool with_signer = true) {
    ControllerOptions o;
    o.csr_auto_approve = auto_approve;
    if (with_signer) o.signer = CsrSigner::from_pem(ca_.cert_pem, ca_.key_pem, lifetime).value();
    controllers_ = std::make_unique<Controllers>(store_, std::move(o));
  }
  ApiRequest request(const std::string& name, const std::string& sub, const std::string& body) {
    ApiRequest req;
    req.resource = find_resource("certificates.k8s.io", "v1", "certificatesigningrequests");
    req.path.group = "certificates.k8s.io";
    req.path.version = "v1";
    req.path.resource = "certificatesigningrequests";
    req.path.name = name;
    req.path.subresource = sub;
    req.body = body;
    req.user = Identity{"system:bootstrap:abcdef", "", {"system:bootstrappers"}};
    return req;
  }
  // Creates a CSR; returns its name.
  std::string create(const std::string& body) {
    Reply r = api_.create(request("", "", body));
    EXPECT_EQ(r.status, 201u) << r.body;
    return meta_string(parse_json(r.body).value(), "name");
  }
  Reply set_condition(const std::string& name, const std::string& type) {
    return api_.update(request(name, "approval",
                               R"({"metadata":{"name":")" + name +
                                   R"("},"status":{"conditions":[{"type":")" + type +
                                   R"(","status":"True","reason":"KubectlApprove"}]}})"));
  }
  rapidjson::Document get(const std::string& name) {
    return parse_json(api_.get(request(name, "", "")).body).value();
  }
  // The issued certificate, or null.
  std::unique_ptr<X509, decltype(&X509_free)> issued(const std::string& name) {
    auto doc = get(name);
    std::unique_ptr<X509, decltype(&X509_free)> none(nullptr, X509_free);
    if (!doc["status"].HasMember("certificate")) return none;
    std::string pem = base::decode_base64(doc["status"]["certificate"].GetString()).value();
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
    return {PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), X509_free};
  }

  TestCa ca_ = make_ca();
  Store store_{100};
  ApiHandlers api_{store_};
  std::unique_ptr<Controllers> controllers_;
};

std::int64_t unix_of(const ASN1_TIME* t) {
  std::tm tm{};
  ASN1_TIME_to_tm(t, &tm);
  return timegm(&tm);
}

TEST_F(CertificatesTest, CreateStampsTheCallerAndKeepsStatusEmpty) {
  start();
  Reply r = api_.create(
      request("", "", csr_body(make_csr("u", {}), "example.com/x", R"(["client auth"])")));
  ASSERT_EQ(r.status, 201u) << r.body;
  auto doc = parse_json(r.body).value();
  EXPECT_EQ(meta_string(doc, "name").rfind("csr-", 0), 0u);
  EXPECT_EQ(meta_string(doc, "name").size(), 9u);
  EXPECT_STREQ(doc["spec"]["username"].GetString(), "system:bootstrap:abcdef");
  EXPECT_EQ(to_json(doc["spec"]["groups"]), R"(["system:bootstrappers","system:authenticated"])");
  EXPECT_EQ(to_json(doc["status"]), "{}");
}

TEST_F(CertificatesTest, CreateRefusesWhatTheApiserverRefuses) {
  start();
  Reply bad = api_.create(request("", "", csr_body("not a pem", "example.com/x", "[]")));
  EXPECT_EQ(bad.status, 422u);
  auto doc = parse_json(bad.body).value();
  std::string message = doc["message"].GetString();
  EXPECT_EQ(message.rfind("CertificateSigningRequest.certificates.k8s.io \"csr-", 0), 0u);
  EXPECT_NE(message.find("is invalid: [spec.request: Invalid value: []byte{0x6e, 0x6f, 0x74"),
            std::string::npos);
  EXPECT_NE(
      message.find("PEM block type must be CERTIFICATE REQUEST, spec.usages: Required value]"),
      std::string::npos);
  EXPECT_STREQ(doc["details"]["group"].GetString(), "certificates.k8s.io");
  EXPECT_STREQ(doc["details"]["causes"][1]["reason"].GetString(), "FieldValueRequired");

  Reply no_signer = api_.create(request("", "", csr_body(make_csr("u", {}), "", R"(["x"])")));
  EXPECT_NE(no_signer.body.find("spec.usages[0]: Unsupported value: \\\"x\\\": supported values: "
                                "\\\"any\\\", \\\"cert sign\\\""),
            std::string::npos);
  EXPECT_NE(no_signer.body.find("spec.signerName: Required value"), std::string::npos);

  Reply short_ttl = api_.create(request(
      "", "",
      csr_body(make_csr("u", {}), "a.b/c", R"(["client auth"])", R"(,"expirationSeconds":599)")));
  EXPECT_NE(short_ttl.body.find("spec.expirationSeconds: Invalid value: 599: may not specify a "
                                "duration less than 600 seconds (10 minutes)"),
            std::string::npos);

  // A request whose signature does not verify: one byte of the signature flipped.
  std::string pem = make_csr("u", {});
  auto der_start = pem.find('\n') + 1;
  std::string body_b64 = pem.substr(der_start, pem.find("-----END") - der_start);
  std::string b64;
  for (char c : body_b64)
    if (c != '\n') b64 += c;
  std::string der = base::decode_base64(b64).value();
  der[der.size() - 3] ^= 0x01;
  std::string tampered = "-----BEGIN CERTIFICATE REQUEST-----\n" + base::encode_base64(der) +
                         "\n-----END CERTIFICATE REQUEST-----\n";
  Reply forged = api_.create(request("", "", csr_body(tampered, "a.b/c", R"(["client auth"])")));
  EXPECT_EQ(forged.status, 422u);
  EXPECT_NE(forged.body.find("x509: ECDSA verification failure"), std::string::npos) << forged.body;
}

TEST_F(CertificatesTest, ApprovalSignsAClientCertificate) {
  start();
  std::string name = create(csr_body(make_csr("system:node:edge-node-1", {"system:nodes"}),
                                     "kubernetes.io/kube-apiserver-client",
                                     R"(["digital signature","client auth"])"));
  EXPECT_EQ(issued(name), nullptr);  // not approved yet
  auto before = Clock::now();
  Reply approved = set_condition(name, "Approved");
  ASSERT_EQ(approved.status, 200u) << approved.body;
  auto reply = parse_json(approved.body).value();
  const auto& cond = reply["status"]["conditions"][0];
  EXPECT_STREQ(cond["type"].GetString(), "Approved");
  EXPECT_TRUE(cond.HasMember("lastUpdateTime") && cond.HasMember("lastTransitionTime"));
  EXPECT_FALSE(reply["status"].HasMember("certificate"));  // the signer writes it afterwards

  auto cert = issued(name);
  ASSERT_NE(cert, nullptr);
  char cn[128] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert.get()), NID_commonName, cn, sizeof cn);
  EXPECT_STREQ(cn, "system:node:edge-node-1");
  EXPECT_TRUE(X509_get_extended_key_usage(cert.get()) & XKU_SSL_CLIENT);
  EXPECT_FALSE(X509_get_extended_key_usage(cert.get()) & XKU_SSL_SERVER);
  EXPECT_EQ(X509_get_key_usage(cert.get()), static_cast<uint32_t>(KU_DIGITAL_SIGNATURE));
  std::int64_t now = Clock::to_time_t(before);
  EXPECT_NEAR(unix_of(X509_get0_notBefore(cert.get())), now - 300, 2);
  EXPECT_NEAR(unix_of(X509_get0_notAfter(cert.get())), now + 31536000 - 300, 2);
}

TEST_F(CertificatesTest, KubeletServingCopiesSansAndShortLifetimesWork) {
  start(std::chrono::seconds(5));
  std::string name = create(
      csr_body(make_csr("system:node:edge-node-1", {"system:nodes"}, "DNS:edge-node-1,IP:10.0.0.7"),
               "kubernetes.io/kubelet-serving", R"(["digital signature","server auth"])"));
  auto before = Clock::to_time_t(Clock::now());
  ASSERT_EQ(set_condition(name, "Approved").status, 200u);
  auto cert = issued(name);
  ASSERT_NE(cert, nullptr);
  EXPECT_TRUE(X509_get_extended_key_usage(cert.get()) & XKU_SSL_SERVER);
  EXPECT_EQ(X509_check_host(cert.get(), "edge-node-1", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(cert.get(), "10.0.0.7", 0), 1);
  EXPECT_NEAR(unix_of(X509_get0_notAfter(cert.get())), before + 5, 2);  // the flag wins
}

TEST_F(CertificatesTest, DeniedAndRefusedAndUnknownAreNotSigned) {
  start(std::chrono::seconds(31536000), /*auto_approve=*/false);
  std::string denied = create(
      csr_body(make_csr("c", {}), "kubernetes.io/kube-apiserver-client", R"(["client auth"])"));
  ASSERT_EQ(set_condition(denied, "Denied").status, 200u);
  EXPECT_EQ(issued(denied), nullptr);

  std::string refused = create(
      csr_body(make_csr("c", {}), "kubernetes.io/kube-apiserver-client", R"(["server auth"])"));
  ASSERT_EQ(set_condition(refused, "Approved").status, 200u);
  EXPECT_EQ(issued(refused), nullptr);
  auto doc = get(refused);
  EXPECT_STREQ(doc["status"]["conditions"][1]["type"].GetString(), "Failed");
  EXPECT_STREQ(doc["status"]["conditions"][1]["message"].GetString(),
               "invalid usage for client certificate: server auth");

  std::string unknown =
      create(csr_body(make_csr("c", {}), "example.com/other", R"(["client auth"])"));
  ASSERT_EQ(set_condition(unknown, "Approved").status, 200u);
  EXPECT_EQ(issued(unknown), nullptr);

  // Approved and Denied are exclusive; removing a condition is forbidden.
  Reply both = api_.update(request(denied, "approval",
                                   R"({"status":{"conditions":[{"type":"Denied","status":"True"},)"
                                   R"({"type":"Approved","status":"True"}]}})"));
  EXPECT_EQ(both.status, 422u);
  EXPECT_NE(both.body.find("status.conditions[1].type: Invalid value: \\\"Approved\\\": Approved "
                           "and Denied conditions are mutually exclusive"),
            std::string::npos)
      << both.body;
  Reply removed = api_.update(request(denied, "approval", R"({"status":{}})"));
  EXPECT_NE(removed.body.find("updates may not remove a condition of type \\\"Denied\\\""),
            std::string::npos);
}

TEST_F(CertificatesTest, AutoApproveApprovesAndSignsAtOnce) {
  start(std::chrono::seconds(3600), /*auto_approve=*/true);
  std::string name = create(csr_body(make_csr("system:node:n", {"system:nodes"}),
                                     "kubernetes.io/kube-apiserver-client-kubelet",
                                     R"(["digital signature","client auth"])"));
  auto doc = get(name);
  EXPECT_STREQ(doc["status"]["conditions"][0]["reason"].GetString(), "AutoApproved");
  EXPECT_NE(issued(name), nullptr);
  EXPECT_EQ(store_.current_rv(), 103u);  // ADDED, MODIFIED (approved), MODIFIED (issued)
}

// Secret kube-system/bootstrap-token-<id> as kubeadm creates it.
std::string token_secret(const std::string& id, const std::string& secret,
                         const std::string& extra) {
  return R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"bootstrap-token-)" + id +
         R"(","namespace":"kube-system"},"type":"bootstrap.kubernetes.io/token",)"
         R"("stringData":{"token-id":")" +
         id + R"(","token-secret":")" + secret + "\"" + extra + "}}";
}

class BootstrapTokenTest : public CertificatesTest {
 protected:
  void add(const std::string& json) {
    ApiRequest req;
    req.resource = find_resource("", "v1", "secrets");
    req.path.version = "v1";
    req.path.resource = "secrets";
    req.path.ns = "kube-system";
    req.body = json;
    ASSERT_EQ(api_.create(req).status, 201u);
  }
};

TEST_F(BootstrapTokenTest, AuthenticatesAsTheRealAuthenticatorDoes) {
  add(token_secret("abcdef", "0123456789abcdef",
                   R"(,"usage-bootstrap-authentication":"true",)"
                   R"("auth-extra-groups":"system:bootstrappers:openyurt:yurthub")"));
  add(token_secret(
      "expire", "0123456789abcdef",
      R"(,"usage-bootstrap-authentication":"true","expiration":"2020-01-01T00:00:00Z")"));
  add(token_secret("nouse1", "0123456789abcdef", ""));
  add(token_secret("badgrp", "0123456789abcdef",
                   R"(,"usage-bootstrap-authentication":"true","auth-extra-groups":"admins")"));
  auto now = Clock::now();
  auto id = authenticate_bootstrap_token(store_, "abcdef.0123456789abcdef", now);
  ASSERT_TRUE(id);
  EXPECT_EQ(id->user, "system:bootstrap:abcdef");
  EXPECT_EQ(id->groups, (std::vector<std::string>{"system:bootstrappers",
                                                  "system:bootstrappers:openyurt:yurthub"}));
  EXPECT_FALSE(authenticate_bootstrap_token(store_, "abcdef.0123456789abcdee", now));  // secret
  EXPECT_FALSE(authenticate_bootstrap_token(store_, "abcdef.0123456789ABCDEF", now));  // form
  EXPECT_FALSE(authenticate_bootstrap_token(store_, "expire.0123456789abcdef", now));
  EXPECT_FALSE(authenticate_bootstrap_token(store_, "nouse1.0123456789abcdef", now));
  EXPECT_FALSE(authenticate_bootstrap_token(store_, "badgrp.0123456789abcdef", now));
  EXPECT_FALSE(authenticate_bootstrap_token(store_, "zzzzzz.0123456789abcdef", now));  // none
  // The expiration is honoured to the second, with offsets.
  auto t = parse_rfc3339("2020-01-01T01:00:00+01:00");
  ASSERT_TRUE(t);
  EXPECT_EQ(Clock::to_time_t(*t), 1577836800);
  EXPECT_FALSE(parse_rfc3339("2020-01-01 00:00:00Z"));
}

TEST(DetachedJws, MatchesAnIndependentHs256) {
  // Made with python3: header b64url('{"alg":"HS256","kid":"abcdef"}'), payload b64url(content),
  // hmac.new(b"0123456789abcdef", header + "." + payload, sha256), payload removed.
  EXPECT_EQ(
      detached_jws("apiVersion: v1\nkind: Config\n", "abcdef", "0123456789abcdef"),
      "eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9..vH_kT4yiol-nrAWgjfCYqvum5wsKETXe0S7OOp1VgnE");
}

TEST_F(BootstrapTokenTest, ClusterInfoIsSignedForSigningTokensOnly) {
  start();
  ASSERT_TRUE(ensure_cluster_info(api_, store_, "https://127.0.0.1:6443", "CA PEM").ok());
  auto data = [&] {
    return parse_json(*store_.get("/configmaps", "kube-public", "cluster-info")->json)
        .value()["data"]
        .GetObject()
        .MemberCount();
  };
  EXPECT_EQ(data(), 1u);
  add(token_secret("abcdef", "0123456789abcdef", R"(,"usage-bootstrap-signing":"true")"));
  add(token_secret("nosign", "0123456789abcdef", R"(,"usage-bootstrap-authentication":"true")"));
  auto cm = parse_json(*store_.get("/configmaps", "kube-public", "cluster-info")->json).value();
  std::string kubeconfig = cm["data"]["kubeconfig"].GetString();
  EXPECT_NE(kubeconfig.find("    server: https://127.0.0.1:6443\n  name: \"\"\n"),
            std::string::npos);
  EXPECT_NE(kubeconfig.find(base::encode_base64("CA PEM")), std::string::npos);
  EXPECT_EQ(cm["data"]["jws-kubeconfig-abcdef"].GetString(),
            detached_jws(kubeconfig, "abcdef", "0123456789abcdef"));
  EXPECT_EQ(data(), 2u);
  store_.remove("/secrets", "kube-system", "bootstrap-token-abcdef");
  EXPECT_EQ(data(), 1u);
}

}  // namespace
}  // namespace yurthub::fake
