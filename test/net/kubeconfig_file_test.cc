// Tests for loading a kubeconfig from disk (net/files.h over kube/kubeconfig.cc): kubeconfigs
// written into a temp dir (kubeadm/kubectl style with *-data fields, file fields relative to the
// kubeconfig, YurtHub's own yurthub.conf with one combined cert+key PEM, JSON), current-context
// selection and every error the header lists.
#include "net/files.h"

#include <gtest/gtest.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace yurthub::net {
namespace {

using kube::Credentials;

namespace fs = std::filesystem;

const std::string kCaPem = "-----BEGIN CERTIFICATE-----\nQ0EgY2VydA==\n-----END CERTIFICATE-----\n";
const std::string kCertPem =
    "-----BEGIN CERTIFICATE-----\nY2xpZW50IGNlcnQ=\n-----END CERTIFICATE-----\n";
const std::string kKeyPem =
    "-----BEGIN EC PRIVATE KEY-----\nY2xpZW50IGtleQ==\n-----END EC PRIVATE KEY-----\n";

std::string base64(const std::string& raw) {
  std::string out(4 * ((raw.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(raw.data()),
                                static_cast<int>(raw.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// A kubeconfig whose current context "ctx" uses cluster "c" and user "u" with the given
// flow-mapping bodies, e.g. cluster = "server: https://a, certificate-authority: ca.crt".
std::string kubeconfig(const std::string& cluster, const std::string& user) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: ctx\n"
         "contexts:\n- name: ctx\n  context: {cluster: c, user: u}\n"
         "clusters:\n- name: c\n  cluster: {" +
         cluster + "}\nusers:\n- name: u\n  user: {" + user + "}\n";
}

class KubeconfigTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "kubeconfig_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    write("ca.crt", kCaPem);
    write("client.crt", kCertPem);
    write("client.key", kKeyPem);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& contents) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << contents;
    return p.string();
  }

  Result<Credentials> load(const std::string& contents) {
    return load_kubeconfig(write("kubeconfig", contents));
  }

  fs::path dir_;
};

TEST_F(KubeconfigTest, DataFieldsAreBase64Decoded) {
  auto r = load(kubeconfig(
      "server: 'https://10.0.0.1:6443', tls-server-name: api.internal, "
      "certificate-authority-data: " +
          base64(kCaPem),
      "client-certificate-data: " + base64(kCertPem) + ", client-key-data: " + base64(kKeyPem)));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->server, "https://10.0.0.1:6443");
  EXPECT_EQ(r->tls_server_name, "api.internal");
  EXPECT_EQ(r->ca_pem, kCaPem);
  EXPECT_EQ(r->client_cert_pem, kCertPem);
  EXPECT_EQ(r->client_key_pem, kKeyPem);
  EXPECT_EQ(r->token, "");
  EXPECT_FALSE(r->insecure_skip_tls_verify);
  EXPECT_TRUE(r->has_client_certificate());
}

TEST_F(KubeconfigTest, RelativeFilesResolveAgainstKubeconfigDirectory) {
  write("sub/ca.pem", kCaPem);
  auto r = load(kubeconfig("server: 'https://a:6443', certificate-authority: sub/ca.pem",
                           "client-certificate: client.crt, client-key: ./client.key"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->ca_pem, kCaPem);
  EXPECT_EQ(r->client_cert_pem, kCertPem);
  EXPECT_EQ(r->client_key_pem, kKeyPem);
}

TEST_F(KubeconfigTest, AbsoluteFilesAndDataWinsOverFile) {
  const std::string other_ca = "-----BEGIN CERTIFICATE-----\nb3RoZXI=\n-----END CERTIFICATE-----\n";
  auto r = load(kubeconfig("certificate-authority: " + (dir_ / "ca.crt").string() +
                               ", certificate-authority-data: " + base64(other_ca),
                           "client-certificate: " + (dir_ / "client.crt").string() +
                               ", client-key: " + (dir_ / "client.key").string()));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->server, "");
  EXPECT_EQ(r->ca_pem, other_ca);
  EXPECT_EQ(r->client_cert_pem, kCertPem);
}

TEST_F(KubeconfigTest, PemFieldsKeepOnlyTheirBlocks) {
  // A chain with text around it (openssl x509 -text output) and a key file with EC parameters.
  const std::string chain = "Certificate:\n  Data: ...\n" + kCertPem + "junk\n" + kCaPem;
  const std::string key =
      "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n" + kKeyPem;
  write("chain.crt", chain);
  write("params.key", key);
  auto r = load(kubeconfig("certificate-authority: ca.crt",
                           "client-certificate: chain.crt, client-key: params.key"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->client_cert_pem, kCertPem + kCaPem);
  EXPECT_EQ(r->client_key_pem, kKeyPem);
}

TEST_F(KubeconfigTest, TokenAndTokenFile) {
  auto inline_token = load(kubeconfig("certificate-authority: ca.crt", "token: abc.def"));
  ASSERT_TRUE(inline_token.ok()) << inline_token.error().message;
  EXPECT_EQ(inline_token->token, "abc.def");
  EXPECT_FALSE(inline_token->has_client_certificate());

  write("secrets/token", "from-file\n");
  auto file_token =
      load(kubeconfig("certificate-authority: ca.crt", "token: stale, tokenFile: secrets/token"));
  ASSERT_TRUE(file_token.ok()) << file_token.error().message;
  EXPECT_EQ(file_token->token, "from-file");  // client-go prefers tokenFile; newline removed
}

TEST_F(KubeconfigTest, InsecureSkipTlsVerifyNeedsNoCa) {
  auto r = load(kubeconfig("server: 'https://a', insecure-skip-tls-verify: true", "token: t"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->insecure_skip_tls_verify);
  EXPECT_EQ(r->ca_pem, "");
}

TEST_F(KubeconfigTest, CurrentContextSelectsClusterAndUser) {
  write("other-ca.crt", "-----BEGIN CERTIFICATE-----\nb3RoZXI=\n-----END CERTIFICATE-----\n");
  auto r = load(R"(apiVersion: v1
kind: Config
clusters:
- name: first
  cluster: {server: "https://first:6443", certificate-authority: other-ca.crt}
- name: second
  cluster: {server: "https://second:6443", certificate-authority: ca.crt}
users:
- name: admin
  user: {token: admin-token}
- name: hub
  user: {token: hub-token}
contexts:
- name: a
  context: {cluster: first, user: admin}
- name: b
  context: {cluster: second, user: hub, namespace: kube-system}
current-context: b
)");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->server, "https://second:6443");
  EXPECT_EQ(r->ca_pem, kCaPem);
  EXPECT_EQ(r->token, "hub-token");
}

TEST_F(KubeconfigTest, JsonKubeconfig) {
  auto r = load(R"({
  "apiVersion": "v1",
  "kind": "Config",
  "clusters": [{"name": "c", "cluster": {"server": "https://[fd00::1]:6443",
                "certificate-authority-data": ")" +
                base64(kCaPem) + R"("}}],
  "users": [{"name": "u", "user": {"client-certificate": "client.crt",
             "client-key": "client.key"}}],
  "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
  "current-context": "ctx",
  "preferences": {}
})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->server, "https://[fd00::1]:6443");
  EXPECT_EQ(r->ca_pem, kCaPem);
  EXPECT_EQ(r->client_cert_pem, kCertPem);
  EXPECT_EQ(r->client_key_pem, kKeyPem);
}

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;
using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

// A real self-signed EC certificate and key, as PEM, for the combined-file case.
std::pair<std::string, std::string> make_cert_and_key() {
  KeyPtr key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  CertPtr cert(X509_new(), X509_free);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("system:node:edge-1"), -1, -1,
                             0);
  X509_set_issuer_name(cert.get(), name);
  X509_set_pubkey(cert.get(), key.get());
  X509_sign(cert.get(), key.get(), EVP_sha256());
  BioPtr cert_bio(BIO_new(BIO_s_mem()), BIO_free), key_bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_X509(cert_bio.get(), cert.get());
  PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  return {bio_text(cert_bio.get()), bio_text(key_bio.get())};
}

TEST_F(KubeconfigTest, YurtHubConfWithCombinedPem) {
  const auto [cert, key] = make_cert_and_key();
  ASSERT_NE(cert.find("BEGIN CERTIFICATE"), std::string::npos);
  // client-go's certificate manager writes the key first, then the certificate.
  const std::string combined = write("pki/yurthub-current.pem", key + cert);
  const std::string ca = write("pki/ca.crt", cert);
  auto r = load(R"(apiVersion: v1
clusters:
- cluster:
    certificate-authority: )" +
                ca + R"(
    server: https://172.16.0.10:6443
  name: default-cluster
contexts:
- context:
    cluster: default-cluster
    namespace: default
    user: default-auth
  name: default-context
current-context: default-context
kind: Config
preferences: {}
users:
- name: default-auth
  user:
    client-certificate: )" +
                combined + R"(
    client-key: )" +
                combined + "\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->server, "https://172.16.0.10:6443");
  EXPECT_EQ(r->client_cert_pem, cert);
  EXPECT_EQ(r->client_key_pem, key);
  EXPECT_EQ(r->ca_pem, cert);

  // And OpenSSL accepts the split halves as a matching certificate and key.
  BioPtr cert_bio(BIO_new_mem_buf(r->client_cert_pem.data(), -1), BIO_free);
  BioPtr key_bio(BIO_new_mem_buf(r->client_key_pem.data(), -1), BIO_free);
  CertPtr parsed_cert(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr), X509_free);
  KeyPtr parsed_key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr),
                    EVP_PKEY_free);
  ASSERT_NE(parsed_cert, nullptr);
  ASSERT_NE(parsed_key, nullptr);
  EXPECT_EQ(X509_check_private_key(parsed_cert.get(), parsed_key.get()), 1);
}

struct ErrorCase {
  std::string name;
  std::string contents;           // written as <dir>/kubeconfig
  std::vector<std::string> want;  // substrings of the message (besides the kubeconfig path)
};

const std::string kCa = "certificate-authority: ca.crt";
const std::string kCertKey = "client-certificate: client.crt, client-key: client.key";

const ErrorCase kErrorCases[] = {
    {"BadYaml", "clusters: [unclosed", {"invalid YAML"}},
    {"NotAMapping", "- just\n- a list\n", {"not a mapping"}},
    {"Empty", "", {"current-context is not set"}},
    {"NoCurrentContext", "apiVersion: v1\nkind: Config\n", {"current-context is not set"}},
    {"CurrentContextMissing",
     "current-context: gone\ncontexts:\n- name: other\n  context: {cluster: c, user: u}\n",
     {"current-context", "context \"gone\" not found"}},
    {"ContextsNotAList", "current-context: x\ncontexts: {x: y}\n", {"contexts is not a list"}},
    {"ContextWithoutCluster",
     "current-context: ctx\ncontexts:\n- name: ctx\n  context: {user: u}\n",
     {"context \"ctx\": cluster is not set"}},
    {"ClusterMissing",
     "current-context: ctx\ncontexts:\n- name: ctx\n  context: {cluster: nope, user: u}\n",
     {"cluster \"nope\" not found in clusters"}},
    {"ContextWithoutUser",
     "current-context: ctx\ncontexts:\n- name: ctx\n  context: {cluster: c}\n"
     "clusters:\n- name: c\n  cluster: {certificate-authority: ca.crt}\n",
     {"context \"ctx\": user is not set"}},
    {"UserMissing",
     "current-context: ctx\ncontexts:\n- name: ctx\n  context: {cluster: c, user: nope}\n"
     "clusters:\n- name: c\n  cluster: {certificate-authority: ca.crt}\n",
     {"user \"nope\" not found in users"}},
    {"CaFileMissing",
     kubeconfig("certificate-authority: missing-ca.crt", kCertKey),
     {"cluster \"c\": certificate-authority", "missing-ca.crt", "No such file"}},
    {"CertFileMissing",
     kubeconfig(kCa, "client-certificate: nope.crt, client-key: client.key"),
     {"user \"u\": client-certificate", "nope.crt", "No such file"}},
    {"KeyFileMissing",
     kubeconfig(kCa, "client-certificate: client.crt, client-key: nope.key"),
     {"user \"u\": client-key", "nope.key", "No such file"}},
    {"TokenFileMissing",
     kubeconfig(kCa, "tokenFile: nope-token"),
     {"user \"u\": tokenFile", "nope-token", "No such file"}},
    {"TokenFileIsADirectory", kubeconfig(kCa, "tokenFile: ."), {"tokenFile", "cannot read"}},
    {"BadBase64Ca",
     kubeconfig("certificate-authority-data: 'not base64!'", kCertKey),
     {"certificate-authority-data", "invalid base64"}},
    {"BadBase64Length",
     kubeconfig(kCa, "client-certificate-data: QUJDRA, client-key: client.key"),
     {"client-certificate-data", "invalid base64"}},
    {"BadBase64Key",
     kubeconfig(kCa, "client-certificate: client.crt, client-key-data: '@@@@'"),
     {"client-key-data", "invalid base64"}},
    {"NoCaNoInsecure",
     kubeconfig("server: 'https://a'", kCertKey),
     {"cluster \"c\"", "certificate-authority", "insecure-skip-tls-verify"}},
    {"InsecureNotBool",
     kubeconfig("insecure-skip-tls-verify: maybe", kCertKey),
     {"insecure-skip-tls-verify is not a boolean"}},
    {"ServerNotString",
     kubeconfig("server: {a: b}, " + kCa, kCertKey),
     {"cluster \"c\": server is not a string"}},
    {"CertWithoutKey",
     kubeconfig(kCa, "client-certificate: client.crt, token: t"),
     {"user \"u\": client-certificate", "client-key"}},
    {"KeyWithoutCert",
     kubeconfig(kCa, "client-key: client.key"),
     {"user \"u\": client-key", "client-certificate"}},
    {"NeitherCertNorToken", kubeconfig(kCa, ""), {"user \"u\"", "neither", "token"}},
    {"ExecPlugin", kubeconfig(kCa, "exec: {command: aws}"), {"neither", "exec is not supported"}},
    {"CaNotPem",
     kubeconfig("certificate-authority: client.key", kCertKey),
     {"certificate-authority", "no PEM CERTIFICATE block"}},
    {"KeyNotPem",
     kubeconfig(kCa, "client-certificate: client.crt, client-key: ca.crt"),
     {"client-key", "no PEM PRIVATE KEY block"}},
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class KubeconfigErrors : public KubeconfigTest, public testing::WithParamInterface<ErrorCase> {};

TEST_P(KubeconfigErrors, NameFileAndField) {
  const ErrorCase& c = GetParam();
  auto r = load(c.contents);
  ASSERT_FALSE(r.ok());
  const std::string& message = r.error().message;
  EXPECT_NE(message.find((dir_ / "kubeconfig").string()), std::string::npos) << message;
  for (const auto& w : c.want) EXPECT_NE(message.find(w), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(All, KubeconfigErrors, testing::ValuesIn(kErrorCases),
                         [](const auto& info) { return info.param.name; });

TEST(LoadKubeconfig, UnreadableFile) {
  auto r = load_kubeconfig("/nonexistent/dir/yurthub.conf");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/dir/yurthub.conf"), std::string::npos);
  EXPECT_NE(r.error().message.find("No such file or directory"), std::string::npos);
}

}  // namespace
}  // namespace yurthub::net
