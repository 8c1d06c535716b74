// The holes a security review found in the proxy path, each shown the way an attacker on the node
// would use it, against the real yurthub binary in front of the fake apiserver: request smuggling
// through `Connection: Content-Length`, a bearer scheme in other letter cases on the HTTPS port,
// impersonation headers lent the node's identity, absolute-form targets, and the upstream
// certificate's name taken from its CN.
#include <signal.h>

#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/integration/cluster.h"
#include "test/integration/http_client.h"

namespace yurthub::test {
namespace {

using testing::HasSubstr;
using testing::Not;
using testing::StartsWith;

class HubSecurity : public testing::Test {
 protected:
  void SetUp() override {
    cluster_.start_apiserver();
    cluster_.start_hub();
  }
  // One request over TLS to the hub's HTTPS port, with the openssl client (setup.sh installs it).
  std::string raw_https(const std::string& request) {
    auto result = run_command({"/usr/bin/openssl", "s_client", "-quiet", "-connect",
                               "127.0.0.1:" + std::to_string(cluster_.secure_port()), "-CAfile",
                               cluster_.dir() + "/pki/ca.crt", "-servername", "localhost"},
                              std::chrono::seconds(20), request);
    return result.out.empty() ? "openssl: " + result.err : result.out;
  }
  Cluster cluster_{https_demo_cluster()};
};

std::string self_subject_review(const std::string& extra_headers) {
  const std::string body =
      R"({"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","metadata":{}})";
  return "POST /apis/authentication.k8s.io/v1/selfsubjectreviews HTTP/1.1\r\nHost: hub\r\n"
         "User-Agent: curl/8.0\r\nContent-Type: application/json\r\n" +
         extra_headers + "Content-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

// `Connection: Content-Length` once stripped the body's framing: the apiserver then read the
// body as a second request, sent with the node's identity on a pooled connection.
TEST_F(HubSecurity, ABodyNamedInConnectionIsNeverReadAsASecondRequest) {
  const std::string smuggled =
      "DELETE /api/v1/namespaces/default/pods/web-0 HTTP/1.1\r\nHost: x\r\n"
      "User-Agent: kubelet/v1.26.1\r\nContent-Length: 0\r\n\r\n";
  const std::string response =
      raw_http(cluster_.proxy_port(),
               "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: hub\r\n"
               "User-Agent: kubelet/v1.26.1\r\nContent-Type: application/json\r\n"
               "Connection: Content-Length\r\nContent-Length: " +
                   std::to_string(smuggled.size()) + "\r\n\r\n" + smuggled);
  // The body reached the apiserver as the POST's body, which is not a ConfigMap.
  EXPECT_THAT(response, StartsWith("HTTP/1.1 400"));
  auto pod = cluster_.kubectl_direct({"get", "pod", "web-0", "-n", "default", "-o", "name"});
  EXPECT_EQ(pod.exit_code, 0) << pod.err;
  EXPECT_EQ(pod.out, "pod/web-0\n");
  EXPECT_THAT(cluster_.apiserver().log(),
              Not(HasSubstr("DELETE /api/v1/namespaces/default/pods/web-0")));
}

// The HTTPS port lets a request through only with a bearer token, and the Forwarder then sends
// it without the node's certificate. Both must read `BEARER x` alike, or it goes upstream with
// the node's certificate.
TEST_F(HubSecurity, ABearerSchemeInAnyCaseNeverBorrowsTheNodeCertificate) {
  for (const std::string scheme : {"BEARER", "bEaReR"}) {
    const std::string response =
        raw_https(self_subject_review("Authorization: " + scheme + " no-such-token\r\n"));
    EXPECT_THAT(response, StartsWith("HTTP/1.1 401")) << scheme << ": " << response;
    EXPECT_THAT(response, Not(HasSubstr("system:node"))) << scheme;
  }
  // A known token in upper case is the caller's, as the apiserver reads the scheme.
  const std::string known =
      raw_https(self_subject_review("Authorization: BEARER pod-token-0123456789\r\n"));
  EXPECT_THAT(known, StartsWith("HTTP/1.1 201"));
  EXPECT_THAT(known, HasSubstr("system:serviceaccount:default:web"));
}

// A local client lent the node's identity must not add its own: impersonation headers and an
// Authorization header of another scheme are dropped, so the apiserver sees the node itself.
TEST_F(HubSecurity, LocalClientsGetTheNodeIdentityAndNothingMore) {
  const std::string response = raw_http(
      cluster_.proxy_port(),
      self_subject_review("Impersonate-User: admin\r\nImpersonate-Group: system:masters\r\n"
                          "Authorization: Basic YWRtaW46YWRtaW4=\r\n"));
  EXPECT_THAT(response, StartsWith("HTTP/1.1 201"));
  EXPECT_THAT(response, HasSubstr(R"("username":"system:node:edge-node-1")"));
  EXPECT_THAT(response, Not(HasSubstr("system:masters")));
}

// An absolute-form target ("GET http://host/path") is what the apiserver acts on as its path:
// the hub must classify it so (cache, filters, authority), not as a non-resource request.
TEST_F(HubSecurity, AnAbsoluteFormTargetIsClassifiedAsItsPath) {
  const std::string target = "/api/v1/namespaces/default/pods/web-0";
  const std::string online = raw_http(
      cluster_.proxy_port(), "GET http://127.0.0.1:6443" + target +
                                 " HTTP/1.1\r\nHost: hub\r\n"
                                 "User-Agent: kubelet/v1.26.1\r\nConnection: close\r\n\r\n");
  ASSERT_THAT(online, StartsWith("HTTP/1.1 200"));
  // The answer was cached as kubelet's get of the pod (durable within a group commit): offline,
  // the origin form is answered.
  cluster_.stop_apiserver(SIGKILL);
  ASSERT_TRUE(cluster_.wait_hub_sees_apiserver(false));
  int status = 0;
  for (int attempt = 0; attempt < 20 && status != 200; ++attempt) {
    if (attempt) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    status = kubelet_get(cluster_.proxy_port(), target).status;
  }
  EXPECT_EQ(status, 200);
  // Connection: close, or the hub keeps the connection open after the 400 (the request was well
  // framed) and raw_http waits out its timeout.
  EXPECT_THAT(raw_http(cluster_.proxy_port(),
                       "OPTIONS * HTTP/1.1\r\nHost: hub\r\nConnection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 400"));
}

// The hub verifies the apiserver's name against the certificate's subjectAltName only: a
// certificate that names the host in its CN alone (any client certificate named like a host)
// must not pass.
TEST(HubUpstreamTls, TheServerNameIsNeverTakenFromTheCertificatesCommonName) {
  for (const std::string cert : {"apiserver", "apiserver-cn-only"}) {
    ClusterOptions options;
    options.apiserver_cert = cert;  // both name "localhost": in a subjectAltName, in the CN only
    options.apiserver_host = "localhost";
    Cluster cluster(options);
    cluster.start_apiserver();
    cluster.start_hub(/*wait_ready=*/false);
    const bool trusted = cluster.wait_hub_sees_apiserver(true, std::chrono::seconds(5));
    EXPECT_EQ(trusted, cert == "apiserver") << cert << "\n" << cluster.hub().log();
    if (!trusted) {
      EXPECT_THAT(cluster.hub().log(), HasSubstr("certificate verify failed"));
    }
  }
}

}  // namespace
}  // namespace yurthub::test
