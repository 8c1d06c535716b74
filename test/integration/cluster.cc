// Integration-test cluster; see cluster.h.
#include "test/integration/cluster.h"

#include "test/integration/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

namespace yurthub::test {
namespace {

// Generous: under ASan with tests in parallel, generating 10,000 pods takes tens of seconds.
constexpr auto kStartTimeout = std::chrono::seconds(90);
const std::string kNode = "edge-node-1";

// GET on an admin port; returns the body ("" on failure) and sets `code`.
std::string admin_get_at(int admin_port, const std::string& path, int* code = nullptr) {
  const std::string response = raw_http(
      admin_port, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
      std::chrono::seconds(5));
  std::smatch m;
  if (code)
    *code = std::regex_search(response, m, std::regex(R"(^HTTP/1\.1 (\d+))")) ? std::stoi(m[1]) : 0;
  auto body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

// Ready = every apiserver has had its first probe (healthy or not): /v1/readyz says 200.
bool wait_ready_at(int admin_port) {
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  int code = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    admin_get_at(admin_port, "/v1/readyz", &code);
    if (code == 200) return true;
    usleep(20000);
  }
  return false;
}

}  // namespace

Cluster::Cluster(ClusterOptions options) : options_(std::move(options)) {
  const std::string script = std::string(YURTHUB_SOURCE_DIR) + "/scripts/gen-certs.sh";
  auto made = run_command({"/bin/bash", script, dir() + "/pki", kNode}, std::chrono::seconds(30));
  EXPECT_EQ(made.exit_code, 0) << made.err;
  std::ofstream(dir() + "/empty.kubeconfig") << "apiVersion: v1\nkind: Config\n";
}

std::string Cluster::expand(const std::string& flag) const {
  std::string out = flag;
  for (auto at = out.find("{dir}"); at != std::string::npos; at = out.find("{dir}", at)) {
    out.replace(at, 5, dir());
  }
  return out;
}

std::string Cluster::testdata(const std::string& relative) const {
  return std::string(YURTHUB_TESTDATA_DIR) + "/" + relative;
}

void Cluster::start_apiserver() {
  const std::string pki = dir() + "/pki/";
  std::vector<std::string> argv = {FAKE_APISERVER_BIN,
                                   "--cert=" + pki + options_.apiserver_cert + ".crt",
                                   "--key=" + pki + options_.apiserver_cert + ".key",
                                   "--client-ca=" + pki + "ca.crt",
                                   "--token-file=" + pki + "tokens.csv",
                                   "--port=" + std::to_string(apiserver_port_)};
  for (const auto& seed : options_.seeds) argv.push_back("--seed=" + testdata(seed));
  for (const auto& flag : options_.apiserver_flags) argv.push_back(expand(flag));
  const std::string log = dir() + "/apiserver-" + std::to_string(++apiserver_starts_) + ".log";
  apiserver_ = Process::start(argv, log);
  ASSERT_TRUE(apiserver_);
  auto port =
      apiserver_->wait_for_log(R"(fake-apiserver listening on 127\.0\.0\.1:(\d+))", kStartTimeout);
  ASSERT_TRUE(port) << "fake apiserver did not start:\n" << apiserver_->log();
  apiserver_port_ = std::stoi(*port);
  if (options_.through_relay && !relay_) relay_ = std::make_unique<TcpRelay>(apiserver_port_);
}

TcpRelay& Cluster::relay() {
  if (!relay_) {  // a test's own mistake, not something to report as a hub failure
    std::fprintf(stderr, "Cluster::relay() without through_relay or before start_apiserver()\n");
    std::abort();
  }
  return *relay_;
}

std::string Cluster::hub_server_addr() const {
  const int port = relay_ ? relay_->port() : apiserver_port_;
  return "https://" + options_.apiserver_host + ":" + std::to_string(port);
}

int Cluster::apiserver_requests(const std::string& regex) const {
  if (!apiserver_) return 0;
  const std::regex pattern(regex);
  std::istringstream lines(apiserver_->log());
  int count = 0;
  for (std::string line; std::getline(lines, line);) count += std::regex_search(line, pattern);
  return count;
}

void Cluster::stop_apiserver(int signo) {
  if (!apiserver_) return;
  apiserver_->signal(signo);
  apiserver_->wait_exit(std::chrono::seconds(10));
}

void Cluster::start_hub(bool wait_ready) {
  const std::string pki = dir() + "/pki/";
  std::vector<std::string> argv = {
      YURTHUB_BIN, "--server-addr=" + hub_server_addr(), "--node-name=" + kNode,
      "--proxy-port=" + std::to_string(proxy_port_), "--serve-port=" + std::to_string(admin_port_),
      "--disk-cache-path=" + dir() + "/cache", "--heartbeat-interval-seconds=1",
      "--heartbeat-timeout-seconds=1",
      // Tests run as root on shared machines: never create an interface on the host. A test
      // that wants one passes --enable-dummy-if=true in hub_flags (the last one wins).
      "--enable-dummy-if=false"};
  if (options_.hub_kubeconfig) argv.push_back("--kubeconfig=" + pki + "hub.kubeconfig");
  if (options_.hub_https) {
    argv.push_back("--tls-cert-file=" + pki + "hub-server.crt");
    argv.push_back("--tls-private-key-file=" + pki + "hub-server.key");
  }
  // Always: a hub that gets its serving certificate by CSR serves the port without the two flags.
  argv.push_back("--proxy-secure-port=" + std::to_string(secure_port_));
  for (const auto& flag : options_.hub_flags) argv.push_back(expand(flag));
  if (!options_.hub_wrapper.empty()) {
    std::vector<std::string> wrapped;
    for (const auto& arg : options_.hub_wrapper) wrapped.push_back(expand(arg));
    argv.insert(argv.begin(), wrapped.begin(), wrapped.end());
  }
  if (!options_.hub_inherited_fds.empty()) {  // as systemd sets them, in the process itself
    argv.insert(argv.begin(),
                {"/bin/sh", "-c",
                 "export LISTEN_PID=$$ LISTEN_FDS=" +
                     std::to_string(options_.hub_inherited_fds.size()) + "; exec \"$0\" \"$@\""});
  }
  const std::string log = dir() + "/hub-" + std::to_string(++hub_starts_) + ".log";
  hub_ = Process::start(argv, log, options_.hub_inherited_fds);
  ASSERT_TRUE(hub_);
  auto proxy = hub_->wait_for_log(R"(proxy listening on 127\.0\.0\.1:(\d+))", kStartTimeout);
  ASSERT_TRUE(proxy) << "hub did not start:\n" << hub_->log();
  proxy_port_ = std::stoi(*proxy);
  admin_port_ =
      std::stoi(*hub_->wait_for_log(R"(admin listening on 127\.0\.0\.1:(\d+))", kStartTimeout));
  if (options_.hub_https || options_.hub_https_by_csr) {
    secure_port_ = std::stoi(
        *hub_->wait_for_log(R"(proxy_secure listening on 127\.0\.0\.1:(\d+))", kStartTimeout));
  }
  if (!wait_ready) return;
  ASSERT_TRUE(wait_ready_at(admin_port_)) << "hub never became ready:\n" << hub_->log();
}

void Cluster::make_node_pki(const std::string& node, const std::string& ip) {
  const std::string script = std::string(YURTHUB_SOURCE_DIR) + "/scripts/gen-node-certs.sh";
  auto made =
      run_command({"/bin/bash", script, dir() + "/pki", node, ip}, std::chrono::seconds(30));
  ASSERT_EQ(made.exit_code, 0) << made.err;
}

PeerHub Cluster::start_peer_hub(const std::string& node, const std::vector<std::string>& flags) {
  const std::string pki = dir() + "/pki/" + node + "/";
  std::vector<std::string> argv = {YURTHUB_BIN,
                                   "--node-name=" + node,
                                   "--kubeconfig=" + pki + "hub.kubeconfig",
                                   "--proxy-port=0",
                                   "--serve-port=0",
                                   "--proxy-secure-port=0",
                                   "--disk-cache-path=" + dir() + "/cache-" + node,
                                   "--root-dir=" + dir() + "/root-" + node,
                                   "--heartbeat-interval-seconds=1",
                                   "--heartbeat-timeout-seconds=1",
                                   "--enable-dummy-if=false"};
  // --server-addr adds servers: the cluster's own unless `flags` name others.
  const bool servers = std::any_of(flags.begin(), flags.end(), [](const std::string& f) {
    return f.starts_with("--server-addr=");
  });
  if (!servers) argv.push_back("--server-addr=" + hub_server_addr());
  for (const auto& flag : flags) argv.push_back(expand(flag));
  PeerHub peer;
  peer.process =
      Process::start(argv, dir() + "/hub-" + node + "-" + std::to_string(++peer_starts_) + ".log");
  if (!peer.process) {
    ADD_FAILURE() << "cannot start the hub of " << node;
    return peer;
  }
  auto proxy =
      peer.process->wait_for_log(R"(proxy listening on 127\.0\.0\.1:(\d+))", kStartTimeout);
  auto admin =
      peer.process->wait_for_log(R"(admin listening on 127\.0\.0\.1:(\d+))", kStartTimeout);
  if (!proxy || !admin) {
    ADD_FAILURE() << "the hub of " << node << " did not start:\n" << peer.process->log();
    return peer;
  }
  peer.proxy_port = std::stoi(*proxy);
  peer.admin_port = std::stoi(*admin);
  EXPECT_TRUE(wait_ready_at(peer.admin_port)) << "the hub of " << node << " never became ready:\n"
                                              << peer.process->log();
  return peer;
}

std::vector<std::string> Cluster::kubectl_argv(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {
      KUBECTL_BIN, "--kubeconfig=" + dir() + "/empty.kubeconfig", "--server=" + hub_url(),
      "--cache-dir=" + dir() + "/kubectl-cache", "--request-timeout=20s"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

CommandResult Cluster::kubectl(const std::vector<std::string>& args,
                               std::chrono::milliseconds timeout, const std::string& input,
                               const std::string& token) {
  auto argv = kubectl_argv(args);
  if (!token.empty()) argv.insert(argv.begin() + 1, "--token=" + token);
  return run_command(argv, timeout, input);
}

CommandResult Cluster::pod_kubectl(const std::vector<std::string>& args,
                                   const std::string& token) const {
  std::vector<std::string> argv = {KUBECTL_BIN,
                                   "--kubeconfig=" + dir() + "/empty.kubeconfig",
                                   "--server=https://127.0.0.1:" + std::to_string(secure_port_),
                                   "--certificate-authority=" + dir() + "/pki/ca.crt",
                                   "--cache-dir=" + dir() + "/kubectl-pod-cache",
                                   "--request-timeout=20s"};
  if (!token.empty()) argv.push_back("--token=" + token);
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv, std::chrono::seconds(30));
}

CommandResult Cluster::kubectl_direct(const std::vector<std::string>& args,
                                      std::chrono::milliseconds timeout, const std::string& input) {
  const std::string pki = dir() + "/pki/";
  std::vector<std::string> argv = {KUBECTL_BIN,
                                   "--kubeconfig=" + dir() + "/empty.kubeconfig",
                                   "--server=https://127.0.0.1:" + std::to_string(apiserver_port_),
                                   "--certificate-authority=" + pki + "ca.crt",
                                   "--client-certificate=" + pki + "admin.crt",
                                   "--client-key=" + pki + "admin.key",
                                   "--cache-dir=" + dir() + "/kubectl-direct-cache",
                                   "--request-timeout=20s"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv, timeout, input);
}

std::string Cluster::admin_get(const std::string& path, int* code) const {
  return admin_get_at(admin_port_, path, code);
}

double metric_at(int admin_port, const std::string& series) {
  std::istringstream lines(admin_get_at(admin_port, "/metrics"));
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return -1;
}

std::string raw_http(int port, const std::string& request, std::chrono::milliseconds timeout) {
  const int fd = connect_to(port, timeout);
  std::string response;
  if (fd >= 0 && ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) >= 0) {
    char buf[65536];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0)
      response.append(buf, static_cast<std::size_t>(n));
  }
  if (fd >= 0) ::close(fd);
  return response;
}

double Cluster::cache_ops() const {
  return std::max(0.0, metric("node_yurthub_cache_written_ops_total"));
}

bool Cluster::wait_cache_committed(double ops_before, std::chrono::milliseconds timeout) const {
  return eventually(
      [&] { return cache_ops() > ops_before && metric("node_yurthub_cache_pending_ops") <= 0; },
      timeout);
}

bool Cluster::wait_hub_sees_apiserver(bool healthy, std::chrono::milliseconds timeout) const {
  const std::string series =
      "node_yurthub_server_healthy_status{server=\"" + hub_server_addr() + "\"}";
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (metric(series) != (healthy ? 1 : 0)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    usleep(25000);
  }
  return true;
}

void Cluster::write_kubeconfig(const std::string& path,
                               const std::vector<std::pair<std::string, std::string>>& user) const {
  std::ofstream out(path);
  out << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
         "https://127.0.0.1:"
      << apiserver_port_ << "\n    certificate-authority: " << dir() << "/pki/ca.crt\n"
      << "users:\n- name: u\n  user:\n";
  for (const auto& [key, value] : user) out << "    " << key << ": " << value << "\n";
  out << "contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n";
}

}  // namespace yurthub::test
