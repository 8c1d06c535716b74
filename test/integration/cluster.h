// Cluster: the world of one integration test, in its own temp dir: a throwaway PKI
// (scripts/gen-certs.sh), the fake apiserver (test/fake_apiserver) on an ephemeral port, the real
// yurthub binary in front of it on ephemeral ports, and the real kubectl pointed at either.
// Everything listens on port 0 and lives in the temp dir, so tests run in parallel.
#pragma once

#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "test/base/poll.h"
#include "test/integration/process.h"
#include "test/integration/tcp_relay.h"

namespace yurthub::test {

struct ClusterOptions {
  // Seed files for the fake apiserver, relative to test/testdata.
  std::vector<std::string> seeds = {"fake_apiserver/sample-objects.json"};
  std::vector<std::string> apiserver_flags;
  std::vector<std::string> hub_flags;
  bool hub_https = false;         // also serve the HTTPS proxy port with the generated serving cert
  bool hub_https_by_csr = false;  // the hub serves HTTPS with a serving certificate it requested
  bool hub_kubeconfig = true;  // pass --kubeconfig=<pki>/hub.kubeconfig (false: a bootstrap test)
  // In apiserver_flags and hub_flags, "{dir}" stands for the cluster's temporary directory.
  // The fake apiserver's serving certificate (scripts/gen-certs.sh), and the host the hub's
  // --server-addr names it by.
  std::string apiserver_cert = "apiserver";
  std::string apiserver_host = "127.0.0.1";
  // Put before the hub's argv: a wrapper that runs it, such as /usr/bin/env with variables
  // ("{dir}" expanded); it must exec the hub in the same process.
  std::vector<std::string> hub_wrapper;
  // Listening sockets the hub gets as systemd's socket activation hands them over (descriptors 3,
  // 4, ... with LISTEN_PID and LISTEN_FDS set); each must be numbered above 2 + their count.
  std::vector<int> hub_inherited_fds;
  // The hub's --server-addr names a TcpRelay in front of the fake apiserver (relay()), so a test
  // can cut the network between them while both run. kubectl_direct still talks to the fake.
  bool through_relay = false;
};

// The demo's objects (test/testdata/fake_apiserver/demo-objects.json): two nodes in two
// NodePools, pods (web-0 with a fixed uid), Services with their Endpoints and EndpointSlices.
inline ClusterOptions demo_cluster() {
  ClusterOptions o;
  o.seeds = {"fake_apiserver/demo-objects.json"};
  return o;
}
// test/testdata/fake_apiserver/topology-objects.json: four nodes in two pools, Services with
// each kind of `openyurt.io/topologyKeys` and their EndpointSlices (the filter and pool tests).
inline ClusterOptions topology_cluster() {
  ClusterOptions o;
  o.seeds = {"fake_apiserver/topology-objects.json"};
  return o;
}
// The demo, with the hub's HTTPS port served with the generated serving certificate.
inline ClusterOptions https_demo_cluster() {
  ClusterOptions o = demo_cluster();
  o.hub_https = true;
  return o;
}

// The value of one metric series from the /metrics of the admin port `admin_port`, or -1 if
// absent. `series` is the full series text as rendered, e.g.
// `node_yurthub_in_flight_requests_total`.
double metric_at(int admin_port, const std::string& series);

// A hub of another node against a Cluster's fake apiserver (the pool tests run several).
struct PeerHub {
  std::unique_ptr<Process> process;
  int proxy_port = 0;
  int admin_port = 0;
  double metric(const std::string& series) const { return metric_at(admin_port, series); }
};

class Cluster {
 public:
  explicit Cluster(ClusterOptions options = {});

  // The fake apiserver keeps the port it got on its first start, so the hub finds it again.
  void start_apiserver();
  void stop_apiserver(int signo = SIGKILL);
  // Starts the hub and, with `wait_ready`, waits for /v1/readyz to say OK.
  void start_hub(bool wait_ready = true);
  Process& hub() { return *hub_; }
  Process& apiserver() { return *apiserver_; }
  // The relay between the hub and the fake apiserver; it keeps its port across
  // stop_apiserver()/start_apiserver(). REQUIRES: through_relay and start_apiserver() called.
  TcpRelay& relay();
  bool hub_running() { return hub_ && hub_->running(); }

  const std::string& dir() const { return dir_.path(); }
  std::string testdata(const std::string& relative) const;
  std::string expand(const std::string& flag) const;  // "{dir}" -> dir()
  // For the next start_hub(): a flag that depends on what the constructor generated (the CA).
  void add_hub_flag(std::string flag) { options_.hub_flags.push_back(std::move(flag)); }
  std::string hub_url() const { return "http://127.0.0.1:" + std::to_string(proxy_port_); }
  int proxy_port() const { return proxy_port_; }
  int secure_port() const { return secure_port_; }
  int admin_port() const { return admin_port_; }
  int apiserver_port() const { return apiserver_port_; }
  // What the hub's --server-addr says: the fake apiserver, or the relay with through_relay.
  std::string hub_server_addr() const;
  // Lines of the running fake apiserver's log (since its last start) matching `regex`
  // (std::regex ECMAScript, searched within each line). It logs one line per request as it
  // answers, `<klog prefix>] METHOD TARGET user=USER STATUS`; a watch's line when it starts, with
  // status 200. E.g. the upstream watches of configmaps in default:
  // R"(\] GET /api/v1/namespaces/default/configmaps\?\S*watch=(true|1)\S* user=)".
  int apiserver_requests(const std::string& regex) const;
  // Writes a kubeconfig at `path` for the fake apiserver (started, so its port is known), trusting
  // its CA, whose user has `user`: kubeconfig keys and values such as {{"token", "..."}} or
  // {{"client-certificate", pem}, {"client-key", pem}}.
  void write_kubeconfig(const std::string& path,
                        const std::vector<std::pair<std::string, std::string>>& user) const;

  // kubectl through the hub (no credentials, like kubelet), optionally with a bearer token.
  CommandResult kubectl(const std::vector<std::string>& args,
                        std::chrono::milliseconds timeout = std::chrono::seconds(30),
                        const std::string& input = "", const std::string& token = "");
  // kubectl as a pod sees 10268: the cluster CA of its service-account volume and its `token`
  // (none: no credentials).
  CommandResult pod_kubectl(const std::vector<std::string>& args, const std::string& token) const;
  // kubectl straight to the fake apiserver as cluster admin (setup, and checking what arrived).
  CommandResult kubectl_direct(const std::vector<std::string>& args,
                               std::chrono::milliseconds timeout = std::chrono::seconds(30),
                               const std::string& input = "");
  // kubectl argv through the hub, for tests that need to run it as a long-lived Process.
  std::vector<std::string> kubectl_argv(const std::vector<std::string>& args) const;

  // GET on the admin port; returns the body ("" on failure) and sets `code`.
  std::string admin_get(const std::string& path, int* code = nullptr) const;
  // The value of one metric series of the cluster's hub (metric_at).
  double metric(const std::string& series) const { return metric_at(admin_port_, series); }
  // Certificates of one more node, signed by the cluster's CA, in <dir>/pki/<node>/
  // (scripts/gen-node-certs.sh): a client certificate and kubeconfig, and with `ip` a serving
  // certificate naming it.
  void make_node_pki(const std::string& node, const std::string& ip = "");
  // Starts a hub of `node` (make_node_pki first) with its own cache and root dirs on free ports,
  // with `flags` after the usual ones (its --server-addr is the cluster's unless `flags` name
  // one), and waits until it is ready.
  PeerHub start_peer_hub(const std::string& node, const std::vector<std::string>& flags);
  // Cache operations the hub has committed so far (node_yurthub_cache_written_ops_total; 0 if
  // none yet).
  double cache_ops() const;
  // Waits until the cache has committed more than `ops_before` operations and has none pending:
  // what was relayed before the call is on disk (a kill -9 now loses none of it).
  bool wait_cache_committed(double ops_before,
                            std::chrono::milliseconds timeout = std::chrono::seconds(5)) const;
  // Waits until the hub's health metric for the fake apiserver says `healthy`; false on timeout.
  bool wait_hub_sees_apiserver(bool healthy,
                               std::chrono::milliseconds timeout = std::chrono::seconds(5)) const;

 private:
  ClusterOptions options_;
  TempDir dir_;
  std::unique_ptr<TcpRelay> relay_;  // before the processes: it outlives them
  std::unique_ptr<Process> apiserver_;
  std::unique_ptr<Process> hub_;
  int apiserver_port_ = 0;
  int proxy_port_ = 0;
  int secure_port_ = 0;
  int admin_port_ = 0;
  int hub_starts_ = 0;
  int apiserver_starts_ = 0;
  int peer_starts_ = 0;
};

// Polls `done` every 100 ms until it holds (true) or `limit` passes (false).
template <class Done>
bool eventually(Done done, std::chrono::milliseconds limit) {
  return test_support::eventually(done, limit, std::chrono::milliseconds(100));
}

// One HTTP/1.1 exchange over a raw loopback socket: sends `request` bytes, reads until the peer
// closes or `timeout`. For malformed-request tests and exact header checks.
std::string raw_http(int port, const std::string& request,
                     std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace yurthub::test
