// Tests for kube/certificate_signing_request: the CSR body, the states read back (shapes from
// kube-apiserver v1.26's certificates.k8s.io/v1 objects), bootstrap tokens, cluster-info and
// detached JWS parts.
#include "kube/certificate_signing_request.h"

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "base/base64.h"
#include "base/json_parse.h"

namespace yurthub::kube {
namespace {

TEST(CsrObject, IsACreatableCertificateSigningRequest) {
  const std::string json = csr_object_json(
      {"-----BEGIN CERTIFICATE REQUEST-----\n", std::string(kClientSigner), {"client auth"}, {}});
  EXPECT_EQ(
      json,
      R"({"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest",)"
      R"("metadata":{"generateName":"csr-"},"spec":{"request":")" +
          base::encode_base64("-----BEGIN CERTIFICATE REQUEST-----\n") +
          R"(","signerName":"kubernetes.io/kube-apiserver-client","usages":["client auth"]}})");
}

TEST(CsrState, ReadsPendingApprovedIssuedDenied) {
  auto pending = parse_csr_state(
      R"({"kind":"CertificateSigningRequest","metadata":{"name":"csr-abc"},"spec":{},"status":{}})");
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->phase, CsrState::Phase::Pending);
  EXPECT_EQ(pending->name, "csr-abc");
  auto approved = parse_csr_state(
      R"({"kind":"CertificateSigningRequest","metadata":{"name":"c"},"status":{"conditions":[)"
      R"({"type":"Approved","status":"True","reason":"AutoApproved","message":"ok"}]}})");
  ASSERT_TRUE(approved);
  EXPECT_EQ(approved->phase, CsrState::Phase::Approved);
  const std::string cert = "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n";
  auto issued = parse_csr_state(
      R"({"kind":"CertificateSigningRequest","metadata":{"name":"c"},"status":{"conditions":[)"
      R"({"type":"Approved","status":"True"}],"certificate":")" +
      base::encode_base64(cert) + "\"}}");
  ASSERT_TRUE(issued);
  EXPECT_EQ(issued->phase, CsrState::Phase::Issued);
  EXPECT_EQ(issued->certificate_pem, cert);
  auto denied = parse_csr_state(
      R"({"kind":"CertificateSigningRequest","metadata":{"name":"c"},"status":{"conditions":[)"
      R"({"type":"Denied","status":"True","reason":"NotAllowed","message":"no"}]}})");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->phase, CsrState::Phase::Denied);
  EXPECT_EQ(denied->reason, "NotAllowed: no");
  EXPECT_FALSE(parse_csr_state(R"({"kind":"Status"})"));
  EXPECT_FALSE(
      parse_csr_state(R"({"kind":"CertificateSigningRequest","status":{"certificate":"@"}})"));
}

TEST(BootstrapToken, OnlyKubeadmsForm) {
  auto token = parse_bootstrap_token("abcdef.0123456789abcdef");
  ASSERT_TRUE(token);
  EXPECT_EQ(token->id, "abcdef");
  EXPECT_EQ(token->full(), "abcdef.0123456789abcdef");
  for (const char* bad : {"abcdef0123456789abcdef", "ABCDEF.0123456789abcdef",
                          "abcde.0123456789abcdefg", "abcdef.0123456789abcde", ""}) {
    auto parsed = parse_bootstrap_token(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().message.find("0123456789"), std::string::npos);
  }
}

TEST(ClusterInfo, ReadsKubeconfigAndTheTokensSignature) {
  auto info = parse_cluster_info(
      R"({"kind":"ConfigMap","data":{"kubeconfig":"k","jws-kubeconfig-abcdef":"h..s"}})", "abcdef");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->kubeconfig, "k");
  EXPECT_EQ(info->signature, "h..s");
  auto unsigned_info = parse_cluster_info(R"({"data":{"kubeconfig":"k"}})", "abcdef");
  ASSERT_TRUE(unsigned_info);
  EXPECT_FALSE(unsigned_info->signature);
  EXPECT_FALSE(parse_cluster_info(R"({"data":{}})", "abcdef"));
  EXPECT_FALSE(parse_cluster_info(R"("a{")", "abcdef"));  // not an object (a fuzz finding)
  EXPECT_FALSE(parse_cluster_info("[]", "abcdef"));
}

// default/kubernetes as kube-apiserver v1.26 serves it (the recorded services list's first item).
TEST(ServiceClusterIps, ReadsTheRecordedKubernetesService) {
  std::ifstream in(YURTHUB_TESTDATA_DIR "/fixtures/apiserver-v1.26/services-list.body");
  const std::string list((std::istreambuf_iterator<char>(in)), {});
  rapidjson::Document doc;
  ASSERT_TRUE(base::parse_json(list, doc));
  const auto& service = doc["items"][0];
  ASSERT_STREQ(service["metadata"]["name"].GetString(), "kubernetes");
  auto ips = parse_service_cluster_ips(base::to_json(service));
  ASSERT_TRUE(ips) << ips.error().message;
  EXPECT_EQ(*ips, std::vector<std::string>{"10.96.0.1"});
}

TEST(ServiceClusterIps, PrefersClusterIpsAndLeavesOutHeadless) {
  auto dual = parse_service_cluster_ips(
      R"({"spec":{"clusterIP":"10.96.0.1","clusterIPs":["10.96.0.1","fd00::1"]}})");
  ASSERT_TRUE(dual);
  EXPECT_EQ(*dual, (std::vector<std::string>{"10.96.0.1", "fd00::1"}));
  auto old = parse_service_cluster_ips(R"({"spec":{"clusterIP":"10.0.0.1"}})");
  ASSERT_TRUE(old);
  EXPECT_EQ(*old, std::vector<std::string>{"10.0.0.1"});
  auto headless = parse_service_cluster_ips(R"({"spec":{"clusterIP":"None"}})");
  ASSERT_TRUE(headless);
  EXPECT_TRUE(headless->empty());
  EXPECT_FALSE(parse_service_cluster_ips(R"({"kind":"Status"})"));
  EXPECT_FALSE(parse_service_cluster_ips("[1]"));
  EXPECT_FALSE(parse_service_cluster_ips("{"));
}

TEST(DetachedJws, SplitsGoJosesCompactFormWithoutPayload) {
  const std::string header = base::encode_base64url(R"({"alg":"HS256","kid":"abcdef"})");
  const std::string jws = header + ".." + base::encode_base64url("sig");
  auto split = split_detached_jws(jws, "content", "abcdef");
  ASSERT_TRUE(split) << split.error().message;
  EXPECT_EQ(split->signing_input, header + "." + base::encode_base64url("content"));
  EXPECT_EQ(split->signature, "sig");
  EXPECT_FALSE(split_detached_jws(jws, "content", "other0"));  // another token's kid
  EXPECT_FALSE(split_detached_jws(header + ".payload.sig", "content", "abcdef"));
  const std::string none = base::encode_base64url(R"({"alg":"none","kid":"abcdef"})");
  EXPECT_FALSE(split_detached_jws(none + "..", "content", "abcdef"));
}

}  // namespace
}  // namespace yurthub::kube
