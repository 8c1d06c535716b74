// The fake apiserver's command line (`--name=value` flags; see README.md). parse_options() is
// pure: argv in, options or a one-line error out; main.cc prints the error and exits 2.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "base/result.h"

namespace yurthub::fake {

struct Options {
  std::string cert_file;                               // --cert: serving certificate (PEM chain)
  std::string key_file;                                // --key
  std::string client_ca_file;                          // --client-ca: CA for client certificates
  std::string token_file;                              // --token-file: kube static token CSV
  std::string bind = "127.0.0.1";                      // --bind
  unsigned short port = 0;                             // --port (0 = ephemeral)
  std::vector<std::string> seeds;                      // --seed (repeatable)
  std::chrono::milliseconds bookmark_interval{60000};  // --bookmark-interval-ms
  std::size_t history = 1000;       // --history: events kept for watch resumption
  std::size_t watch_queue = 10000;  // --watch-queue: unsent events per watch before it is dropped
  // --watch-list=false: answer streaming lists (sendInitialEvents) as kube-apiserver v1.26 does,
  // with 422; true (default): as one with WatchList enabled (1.32, 1.34+)
  bool watch_list = true;
  std::vector<std::string> deny_users;        // --deny-user (repeatable)
  std::size_t generate_pods = 0;              // --generate-pods
  std::size_t generate_pod_bytes = 1024;      // --generate-pod-bytes
  std::string generate_node = "edge-node-1";  // --generate-node
  std::string csr_signing_cert;               // --csr-signing-cert: CA that signs approved CSRs
  std::string csr_signing_key;                // --csr-signing-key
  bool csr_auto_approve = false;              // --csr-auto-approve=true: approve every new CSR
  std::chrono::seconds csr_cert_lifetime{31536000};  // --csr-cert-lifetime-seconds: longest issued
  std::string cluster_info_server;  // --cluster-info-server: URL, or "self"; "" = no cluster-info
  std::string service_account_key_file;  // --service-account-key-file: PEM RSA key; "" = generated
  // --issuer-discovery-groups: who may read the issuer discovery documents (comma list)
  std::vector<std::string> issuer_discovery_groups{"system:serviceaccounts"};
  bool verbose = false;  // --v=4 or higher: debug logging
  bool help = false;     // --help
};

Result<Options> parse_options(int argc, const char* const* argv);
const char* usage();

}  // namespace yurthub::fake
