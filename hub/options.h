// HubOptions: everything the `yurthub` command line configures, with YurtHub's flag names and
// defaults (docs/reference/yurthub.md §1.3), plus `--kubeconfig` for the hub's own identity and
// `--tls-cert-file`/`--tls-private-key-file` for the HTTPS proxy port. parse_flags() is pure
// (argv in, options or a one-line error out); cmd/yurthub.cc prints the error and exits 2.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/result.h"
#include "hub/flag_values.h"

namespace yurthub::hub {

enum class LbMode { RoundRobin, Priority };

inline constexpr std::size_t kMaxServers = 64;  // --server-addr entries (ServerSet's bound)
enum class WorkingMode { Edge, Cloud };
// token: the hub's own certificate by CSR; kubeletcertificate: kubelet's client certificate.
enum class BootstrapMode { Token, KubeletCertificate };

struct HubOptions {
  std::vector<ServerAddress> servers;            // --server-addr (comma list, required)
  std::string node_name;                         // --node-name (required)
  std::string nodepool_name;                     // --nodepool-name
  std::string bind_address = "127.0.0.1";        // --bind-address: admin listener (10267)
  int serve_port = 10267;                        // --serve-port (0 = pick a free port)
  std::string bind_proxy_address = "127.0.0.1";  // --bind-proxy-address: plain HTTP proxy
  int proxy_port = 10261;                        // --proxy-port (0 = pick a free port)
  // --bind-proxy-secure-address (ours). Default: dummy_if_ip with enable_dummy_if (YurtHub's
  // secure port listens there only), else bind_proxy_address.
  std::string bind_proxy_secure_address;
  int proxy_secure_port = 10268;        // --proxy-secure-port (0 = pick a free port)
  std::string tls_cert_file;            // --tls-cert-file: serving cert for the HTTPS proxy port
  std::string tls_private_key_file;     // --tls-private-key-file
  LbMode lb_mode = LbMode::RoundRobin;  // --lb-mode rr|priority
  int heartbeat_failed_retry = 3;       // --heartbeat-failed-retry: attempts per probe
  int heartbeat_healthy_threshold = 2;  // --heartbeat-healthy-threshold
  int heartbeat_timeout_seconds = 2;    // --heartbeat-timeout-seconds
  int heartbeat_interval_seconds = 10;  // --heartbeat-interval-seconds
  std::string disk_cache_path = "/etc/kubernetes/cache/";  // --disk-cache-path
  int disk_cache_size_mb = 1024;                 // --disk-cache-size-mb: LMDB map size (ours)
  int offline_watch_bookmark_seconds = 60;       // --offline-watch-bookmark-seconds (ours)
  int journal_max_entries = 10000;               // --journal-max-entries (ours)
  int journal_max_size_mb = 64;                  // --journal-max-size-mb (ours)
  int journal_max_events = 1000;                 // --journal-max-events (ours)
  std::string root_dir = "/var/lib/yurthub";     // --root-dir
  WorkingMode working_mode = WorkingMode::Edge;  // --working-mode edge|cloud
  std::string kubeconfig;  // --kubeconfig; empty = <root-dir>/yurthub.conf (YurtHub's own file)
  BootstrapMode bootstrap_mode = BootstrapMode::Token;      // --bootstrap-mode
  std::string bootstrap_file;                               // --bootstrap-file
  std::string join_token;                                   // --join-token
  std::vector<std::string> discovery_token_ca_cert_hashes;  // --discovery-token-ca-cert-hash
  bool discovery_token_unsafe_skip_ca_verification = false;
  std::vector<std::string> hub_cert_organizations;  // --hub-cert-organizations
  std::chrono::seconds min_request_timeout{1800};   // --min-request-timeout (Go duration)
  int max_requests_in_flight = 250;                 // --max-requests-in-flight
  int max_long_running_requests = 2000;  // --max-long-running-requests: watches, tunnels (ours)
  int max_connections = 4096;            // --max-connections: client connections, all (ours)
  int max_connections_per_peer = 1024;   // --max-connections-per-peer: per uid / address (ours)
  std::chrono::seconds request_body_timeout{60};       // --request-body-timeout (ours)
  bool enable_resource_filter = true;                  // --enable-resource-filter
  std::vector<std::string> disabled_resource_filters;  // --disabled-resource-filters
  std::vector<std::string> pool_scope_resources;       // --pool-scope-resources (added)
  bool pool_sharing = true;                            // --pool-sharing
  int multiplexer_port = 10269;                        // --multiplexer-port
  bool enable_dummy_if = true;                         // --enable-dummy-if: create and keep it
  std::string dummy_if_ip = "169.254.2.1";             // --dummy-if-ip
  std::string dummy_if_name = "hub-dummy0";            // --dummy-if-name
  // Not a flag: the link kind made for it. Tests on kernels built without CONFIG_DUMMY use "ifb",
  // which behaves alike here (net/dummy_interface.h).
  std::string dummy_if_kind = "dummy";
  std::string node_ip;  // --node-ip: a SAN of the serving certificate (YurtHub: also 10269's bind)
  std::string hub_namespace = "kube-system";  // --namespace
  int worker_threads = 1;  // --worker-threads: proxy I/O threads (ours; YurtHub is Go)
  int verbosity = 2;       // --v: klog verbosity; >= 4 enables debug lines

  // Flags YurtHub has that this hub accepts for drop-in compatibility but does not act on; each
  // one given is named in a startup warning (e.g. "--bootstrap-file").
  std::vector<std::string> ignored_flags;

  bool show_help = false;     // --help / -h: print usage() and exit 0
  bool show_version = false;  // --version: print the version and exit 0
};

// --bootstrap-mode=token with --bootstrap-file or --join-token: the hub requests and renews its
// own certificate (hub/certificate) and writes <root-dir>/yurthub.conf itself.
bool manages_own_certificate(const HubOptions& options);

// Parses argv[1..argc). Accepts `--name=value`, `--name value`, bare `--bool-flag` and
// `--bool-flag=true|false`. Unknown flags, bad values and missing required flags (unless
// --help/--version was given) are errors whose message names the flag.
Result<HubOptions> parse_flags(int argc, const char* const* argv);

// The usage text printed for --help: every flag with its default and one line of help.
std::string usage();

}  // namespace yurthub::hub
