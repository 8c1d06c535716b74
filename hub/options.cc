// Command-line parsing for the `yurthub` binary (see options.h): one table of flag specs, a
// pflag-compatible argv walker over it, and the usage text generated from the same table. The
// values themselves are read by hub/flag_values.
// Called once by cmd/yurthub.cc before anything else runs; pure and single-threaded.
#include "hub/options.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <variant>

#include "base/url.h"

namespace yurthub::hub {
namespace {

enum class Kind { String, StringSlice, Int, Bool, Duration };

// Usage sections, printed in this order.
enum class Group { Required, Upstream, Serving, Node, Filters, General, Compat };

// A custom setter validates and stores a raw string value; its error is the reason only.
using Setter = Status (*)(std::string_view value, HubOptions& options);

// Where a flag's value goes. std::monostate: accepted for YurtHub compatibility, then discarded.
using Target = std::variant<std::monostate, std::string HubOptions::*, int HubOptions::*,
                            bool HubOptions::*, std::vector<std::string> HubOptions::*,
                            std::chrono::seconds HubOptions::*, Setter>;

struct FlagSpec {
  std::string_view name;  // without the leading "--"
  Kind kind;
  Group group;
  Target target;
  std::string_view default_text;  // as shown by usage(); "" = no default shown
  std::string_view help;
  int min = INT_MIN;  // Int flags only: inclusive range
  int max = INT_MAX;
};

Status set_server_addr(std::string_view value, HubOptions& options);
Status set_lb_mode(std::string_view value, HubOptions& options);
Status set_working_mode(std::string_view value, HubOptions& options);
Status set_bootstrap_mode(std::string_view value, HubOptions& options);
Status set_dummy_if_ip(std::string_view value, HubOptions& options);
Status set_dummy_if_name(std::string_view value, HubOptions& options);
Status set_node_ip(std::string_view value, HubOptions& options);

using K = Kind;
using G = Group;
using O = HubOptions;
constexpr std::monostate kIgnored{};

// clang-format off
constexpr FlagSpec kFlags[] = {
  {"server-addr", K::String, G::Required, &set_server_addr, "",
   "Comma-separated kube-apiserver URLs (https only; scheme defaults to https, port to 443)."},
  {"node-name", K::String, G::Required, &O::node_name, "", "Name of the node this hub runs on."},

  {"lb-mode", K::String, G::Upstream, &set_lb_mode, "rr",
   "How requests are spread over the servers: rr (round robin) or priority (first healthy)."},
  {"heartbeat-failed-retry", K::Int, G::Upstream, &O::heartbeat_failed_retry, "3",
   "Attempts per health probe before a server counts as failed.", 1},
  {"heartbeat-healthy-threshold", K::Int, G::Upstream, &O::heartbeat_healthy_threshold, "2",
   "Consecutive successful probes before a failed server is healthy again.", 1},
  {"heartbeat-timeout-seconds", K::Int, G::Upstream, &O::heartbeat_timeout_seconds, "2",
   "Timeout of one health probe, in seconds.", 1},
  {"heartbeat-interval-seconds", K::Int, G::Upstream, &O::heartbeat_interval_seconds, "10",
   "Period between health probes, in seconds.", 1},
  {"kubeconfig", K::String, G::Upstream, &O::kubeconfig, "<root-dir>/yurthub.conf",
   "Kubeconfig holding the hub's own identity (CA, client certificate/key or token); with "
   "--bootstrap-mode=kubeletcertificate, kubelet's (default /etc/kubernetes/kubelet.conf)."},
  {"bootstrap-mode", K::String, G::Upstream, &set_bootstrap_mode, "token",
   "token: the hub's own certificate by CSR, renewed; kubeletcertificate: kubelet's client "
   "certificate, re-read when kubelet rotates it."},
  {"bootstrap-file", K::String, G::Upstream, &O::bootstrap_file, "",
   "Kubeconfig with a bootstrap token, used to request the hub's certificate."},
  {"join-token", K::String, G::Upstream, &O::join_token, "",
   "Bootstrap token (cluster-info discovery, then a CSR for the hub's certificate)."},
  {"discovery-token-ca-cert-hash", K::StringSlice, G::Upstream,
   &O::discovery_token_ca_cert_hashes, "[]",
   "Pins of the cluster CA's public key for --join-token discovery (sha256:<hex>)."},
  {"discovery-token-unsafe-skip-ca-verification", K::Bool, G::Upstream,
   &O::discovery_token_unsafe_skip_ca_verification, "false",
   "Trust the CA named by cluster-info without a pin."},
  {"hub-cert-organizations", K::StringSlice, G::Upstream, &O::hub_cert_organizations, "[]",
   "Extra organizations in the hub's client certificate."},

  {"bind-address", K::String, G::Serving, &O::bind_address, "127.0.0.1",
   "Address of the admin listener (healthz, readyz, metrics)."},
  {"serve-port", K::Int, G::Serving, &O::serve_port, "10267",
   "Port of the admin listener (0 picks a free port).", 0, kMaxPort},
  {"bind-proxy-address", K::String, G::Serving, &O::bind_proxy_address, "127.0.0.1",
   "Address of the plain-HTTP proxy listener."},
  {"proxy-port", K::Int, G::Serving, &O::proxy_port, "10261",
   "Port of the plain-HTTP proxy listener (0 picks a free port).", 0, kMaxPort},
  {"bind-proxy-secure-address", K::String, G::Serving, &O::bind_proxy_secure_address,
   "<dummy-if-ip>, or <bind-proxy-address> with --enable-dummy-if=false",
   "Address of the HTTPS proxy listener."},
  {"proxy-secure-port", K::Int, G::Serving, &O::proxy_secure_port, "10268",
   "Port of the HTTPS proxy listener (0 picks a free port).", 0, kMaxPort},
  {"tls-cert-file", K::String, G::Serving, &O::tls_cert_file, "",
   "Serving certificate (PEM) of the HTTPS proxy listener."},
  {"tls-private-key-file", K::String, G::Serving, &O::tls_private_key_file, "",
   "Private key (PEM) of the serving certificate."},
  {"max-requests-in-flight", K::Int, G::Serving, &O::max_requests_in_flight, "250",
   "Maximum number of proxied requests served at once.", 1},
  {"max-long-running-requests", K::Int, G::Serving, &O::max_long_running_requests, "2000",
   "Maximum number of watches and tunnels (exec, attach, port-forward) served at once (ours).", 1},
  {"max-connections", K::Int, G::Serving, &O::max_connections, "4096",
   "Maximum number of open client connections on the proxy ports; more are refused (ours).", 1},
  {"max-connections-per-peer", K::Int, G::Serving, &O::max_connections_per_peer, "1024",
   "Maximum open client connections of one local user (by uid) or one remote address (ours).", 1},
  {"request-body-timeout", K::Duration, G::Serving, &O::request_body_timeout, "60s",
   "Time a client has to send a request body, whatever the pace (ours)."},
  {"min-request-timeout", K::Duration, G::Serving, &O::min_request_timeout, "1800s",
   "How long an offline watch is held when the client gave no timeoutSeconds (Go duration)."},
  {"enable-dummy-if", K::Bool, G::Serving, &O::enable_dummy_if, "true",
   "Create the dummy interface (needs CAP_NET_ADMIN), keep it and serve the proxy ports on its "
   "address for in-cluster clients."},
  {"dummy-if-ip", K::String, G::Serving, &set_dummy_if_ip, "169.254.2.1",
   "Address of the dummy interface; in 169.254.0.0/16 but not 169.254.31.0/24 or 169.254.1.1."},
  {"dummy-if-name", K::String, G::Serving, &set_dummy_if_name, "hub-dummy0",
   "Name of the dummy interface (at most 15 bytes)."},
  {"node-ip", K::String, G::Serving, &set_node_ip,
   "the address of the default route's interface, IPv4 first",
   "The node's IP: a subjectAltName of the HTTPS port's certificate by CSR, and the address of "
   "the multiplexer port."},
  {"worker-threads", K::Int, G::Serving, &O::worker_threads, "1",
   "Proxy I/O threads.", 1, 64},

  {"nodepool-name", K::String, G::Node, &O::nodepool_name, "", "Node pool this node belongs to."},
  {"working-mode", K::String, G::Node, &set_working_mode, "edge",
   "edge (cache and serve offline) or cloud (proxy only)."},
  {"namespace", K::String, G::Node, &O::hub_namespace, "kube-system",
   "Namespace of the yurt-hub-cfg ConfigMap."},
  {"root-dir", K::String, G::Node, &O::root_dir, "/var/lib/yurthub",
   "Directory of the hub's own kubeconfig and certificates."},
  {"disk-cache-path", K::String, G::Node, &O::disk_cache_path, "/etc/kubernetes/cache/",
   "Directory of the offline cache."},
  {"disk-cache-size-mb", K::Int, G::Node, &O::disk_cache_size_mb, "1024",
   "Maximum size of the offline cache's data file, in MiB (ours; YurtHub has no limit).", 16,
   1 << 20},
  {"offline-watch-bookmark-seconds", K::Int, G::Node, &O::offline_watch_bookmark_seconds, "60",
   "Period of BOOKMARK events on offline watches that allow them (ours).", 1, 3600},
  {"journal-max-entries", K::Int, G::Node, &O::journal_max_entries, "10000",
   "Offline writes the journal keeps for replay; past it, offline writes get 503 (ours).", 1,
   1000000},
  {"journal-max-size-mb", K::Int, G::Node, &O::journal_max_size_mb, "64",
   "Bytes of offline writes the journal keeps, in MiB; past it, offline writes get 503 (ours).",
   1, 4096},
  {"journal-max-events", K::Int, G::Node, &O::journal_max_events, "1000",
   "Events created offline that the journal keeps; past it the oldest is dropped (ours).", 0,
   1000000},

  {"enable-resource-filter", K::Bool, G::Filters, &O::enable_resource_filter, "true",
   "Run the response filters."},
  {"pool-sharing", K::Bool, G::Filters, &O::pool_sharing, "true",
   "Answer the node's lists and watches of pool-scope resources from one shared upstream "
   "list+watch per resource (this hub's own flag: YurtHub's multiplexer cannot be turned off)."},
  {"pool-scope-resources", K::StringSlice, G::Filters, &O::pool_scope_resources, "[]",
   "group/version/resource of lists and watches every local client shares one upstream "
   "list+watch of, added to /v1/services and discovery.k8s.io/v1/endpointslices; the "
   "leader-hub-<pool> ConfigMap's pool-scoped-metadata replaces the set."},
  {"multiplexer-port", K::Int, G::Filters, &O::multiplexer_port, "10269",
   "Port (on --node-ip) where a leader hub feeds the follower hubs of its pool over mutual TLS, "
   "and where followers reach their leader; 0 serves none (this hub's own value).",
   0, kMaxPort},
  {"disabled-resource-filters", K::StringSlice, G::Filters, &O::disabled_resource_filters, "[]",
   "Filters to disable (comma list, repeatable); \"*\" disables all."},

  {"v", K::Int, G::General, &O::verbosity, "2", "Log verbosity; 4 or more adds debug lines."},
  {"help", K::Bool, G::General, &O::show_help, "", "Print this help and exit (also -h)."},
  {"version", K::Bool, G::General, &O::show_version, "", "Print the version and exit."},

  {"enable-iptables", K::Bool, G::Compat, kIgnored, "false", "Deprecated iptables rules."},
  {"enable-node-pool", K::Bool, G::Compat, kIgnored, "true", "Node pool membership."},
  {"enable-pool-service-topology", K::Bool, G::Compat, kIgnored, "false",
   "Node pool membership from NodeBuckets."},
  {"profiling", K::Bool, G::Compat, kIgnored, "true", "pprof endpoints."},
  {"gc-frequency", K::Int, G::Compat, kIgnored, "120", "Events GC period in minutes."},
  {"kubelet-health-grace-period", K::Duration, G::Compat, kIgnored, "40s",
   "Kubelet lease staleness that stops heartbeats."},
  {"host-control-plane-address", K::String, G::Compat, kIgnored, "",
   "Host control plane (local mode)."},
  {"logtostderr", K::Bool, G::Compat, kIgnored, "true", "klog: log to stderr."},
  {"alsologtostderr", K::Bool, G::Compat, kIgnored, "false", "klog: also log to stderr."},
  {"log-file", K::String, G::Compat, kIgnored, "", "klog: log file."},
  {"add_dir_header", K::Bool, G::Compat, kIgnored, "false", "klog: directory in log headers."},
  // Further klog/component-base flags YurtHub's command line also accepts.
  {"log-dir", K::String, G::Compat, kIgnored, "", "klog: log directory."},
  {"log-file-max-size", K::Int, G::Compat, kIgnored, "1800", "klog: log file size in MB."},
  {"log-flush-frequency", K::Duration, G::Compat, kIgnored, "5s", "klog: flush period."},
  {"one-output", K::Bool, G::Compat, kIgnored, "false", "klog: one output per severity."},
  {"skip-headers", K::Bool, G::Compat, kIgnored, "false", "klog: no log headers."},
  {"skip-log-headers", K::Bool, G::Compat, kIgnored, "false", "klog: no log file headers."},
  {"stderrthreshold", K::String, G::Compat, kIgnored, "2", "klog: stderr severity."},
  {"vmodule", K::String, G::Compat, kIgnored, "", "klog: per-file verbosity."},
};
// clang-format on

// A flag's kind and target must agree; checked at compile time so apply() can trust the table.
constexpr bool table_is_consistent() {
  for (const FlagSpec& f : kFlags) {
    if (std::holds_alternative<std::monostate>(f.target)) continue;
    bool ok = false;
    switch (f.kind) {
      case Kind::String:
        ok = std::holds_alternative<std::string O::*>(f.target) ||
             std::holds_alternative<Setter>(f.target);
        break;
      case Kind::StringSlice:
        ok = std::holds_alternative<std::vector<std::string> O::*>(f.target);
        break;
      case Kind::Int:
        ok = std::holds_alternative<int O::*>(f.target);
        break;
      case Kind::Bool:
        ok = std::holds_alternative<bool O::*>(f.target);
        break;
      case Kind::Duration:
        ok = std::holds_alternative<std::chrono::seconds O::*>(f.target);
        break;
    }
    if (!ok) return false;
  }
  return true;
}
static_assert(table_is_consistent(), "flag kind does not match its target");

Error invalid(const FlagSpec& flag, std::string_view value, std::string_view why) {
  return make_error("invalid value " + quote(value) + " for --" + std::string(flag.name) + ": " +
                    std::string(why));
}

Status set_server_addr(std::string_view value, HubOptions& options) {
  options.servers.clear();             // a string flag in YurtHub: the last occurrence wins
  if (trim(value).empty()) return {};  // reported as missing by the required check
  const std::vector<std::string_view> entries = split_commas(value);
  if (entries.size() > kMaxServers) {
    return make_error("at most " + std::to_string(kMaxServers) + " servers are supported");
  }
  for (std::string_view entry : entries) {
    if (entry.empty()) return make_error("empty address in the list");
    auto addr = parse_server_address(entry);
    if (!addr && entries.size() == 1) return addr.error();
    if (!addr) return make_error(quote(entry) + ": " + addr.error().message);
    options.servers.push_back(std::move(addr).value());
  }
  return {};
}

Status set_lb_mode(std::string_view value, HubOptions& options) {
  if (value == "rr") {
    options.lb_mode = LbMode::RoundRobin;
  } else if (value == "priority") {
    options.lb_mode = LbMode::Priority;
  } else {
    return make_error("must be rr or priority");
  }
  return {};
}

Status set_bootstrap_mode(std::string_view value, HubOptions& options) {
  if (value == "token") {
    options.bootstrap_mode = BootstrapMode::Token;
  } else if (value == "kubeletcertificate") {
    options.bootstrap_mode = BootstrapMode::KubeletCertificate;
  } else {
    return make_error("must be token or kubeletcertificate");
  }
  return {};
}

Status set_working_mode(std::string_view value, HubOptions& options) {
  if (value == "edge") {
    options.working_mode = WorkingMode::Edge;
  } else if (value == "cloud") {
    options.working_mode = WorkingMode::Cloud;
  } else if (value == "local") {
    return make_error("working mode local is not supported by this hub");
  } else {
    return make_error("must be edge or cloud");
  }
  return {};
}

Status set_dummy_if_ip(std::string_view value, HubOptions& options) {
  if (Status checked = check_dummy_if_ip(value); !checked) return checked;
  options.dummy_if_ip = std::string(value);
  return {};
}

Status set_node_ip(std::string_view value, HubOptions& options) {
  if (Status checked = check_ip_or_empty(value); !checked) return checked;
  options.node_ip = std::string(value);
  return {};
}

Status set_dummy_if_name(std::string_view value, HubOptions& options) {
  if (Status checked = check_interface_name(value); !checked) return checked;
  options.dummy_if_name = std::string(value);
  return {};
}

// Parses `value` per the flag's kind and stores it (or discards it for ignored flags).
Status apply(const FlagSpec& flag, std::string_view value, HubOptions& options) {
  switch (flag.kind) {
    case Kind::Bool: {
      const auto b = parse_bool(value);
      if (!b) return invalid(flag, value, "not a boolean (use true or false)");
      if (auto* m = std::get_if<bool O::*>(&flag.target)) options.*(*m) = *b;
      return {};
    }
    case Kind::Int: {
      const auto n = parse_int(value);
      if (!n) return invalid(flag, value, "not an integer");
      if (*n < flag.min || *n > flag.max) {
        return invalid(flag, value,
                       flag.max == INT_MAX ? "must be at least " + std::to_string(flag.min)
                                           : "must be " + std::to_string(flag.min) + ".." +
                                                 std::to_string(flag.max));
      }
      if (auto* m = std::get_if<int O::*>(&flag.target)) options.*(*m) = *n;
      return {};
    }
    case Kind::Duration: {
      auto d = parse_go_duration(value);
      if (!d) return invalid(flag, value, d.error().message);
      if (auto* m = std::get_if<std::chrono::seconds O::*>(&flag.target)) options.*(*m) = *d;
      return {};
    }
    case Kind::StringSlice:
      if (auto* m = std::get_if<std::vector<std::string> O::*>(&flag.target)) {
        for (std::string_view item : split_commas(value)) {
          if (!item.empty()) (options.*(*m)).emplace_back(item);
        }
      }
      return {};
    case Kind::String:
      if (auto* m = std::get_if<std::string O::*>(&flag.target)) options.*(*m) = std::string(value);
      if (auto* set = std::get_if<Setter>(&flag.target)) {
        if (Status s = (*set)(value, options); !s) return invalid(flag, value, s.error().message);
      }
      return {};
  }
  return {};
}

// pflag-style lookup; klog's flags are registered with '_' and normalised to '-', so both work.
const FlagSpec* find_flag(std::string_view name) {
  auto same = [](char a, char b) {
    return a == b || (a == '_' && b == '-') || (a == '-' && b == '_');
  };
  for (const FlagSpec& f : kFlags) {
    if (std::equal(f.name.begin(), f.name.end(), name.begin(), name.end(), same)) return &f;
  }
  return nullptr;
}

void note_ignored(const FlagSpec& flag, HubOptions& options) {
  if (!std::holds_alternative<std::monostate>(flag.target)) return;
  std::string name = "--" + std::string(flag.name);
  auto& ignored = options.ignored_flags;
  if (std::find(ignored.begin(), ignored.end(), name) == ignored.end()) ignored.push_back(name);
}

// Fills the defaults that depend on other flags, then checks the required flags.
Status complete_and_check(HubOptions& options) {
  if (options.bind_proxy_secure_address.empty()) {
    options.bind_proxy_secure_address =
        options.enable_dummy_if ? options.dummy_if_ip : options.bind_proxy_address;
  }
  const bool manages_certificate = manages_own_certificate(options);
  const std::string own = (std::filesystem::path(options.root_dir) / "yurthub.conf").string();
  if (manages_certificate && !options.kubeconfig.empty() && options.kubeconfig != own) {
    return make_error("--kubeconfig names another file than the hub's own " + own +
                      ", which --bootstrap-file/--join-token make the hub write");
  }
  if (options.kubeconfig.empty()) {
    options.kubeconfig = options.bootstrap_mode == BootstrapMode::KubeletCertificate
                             ? "/etc/kubernetes/kubelet.conf"
                             : own;
  }
  if (options.show_help || options.show_version) return {};
  if (options.servers.empty()) return make_error("missing required flag --server-addr");
  if (options.node_name.empty()) return make_error("missing required flag --node-name");
  return {};
}

}  // namespace

bool manages_own_certificate(const HubOptions& options) {
  return options.bootstrap_mode == BootstrapMode::Token &&
         (!options.bootstrap_file.empty() || !options.join_token.empty());
}

Result<HubOptions> parse_flags(int argc, const char* const* argv) {
  HubOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h") {
      options.show_help = true;
      continue;
    }
    if (arg == "--") {
      if (i + 1 < argc) return make_error("unexpected argument " + quote(argv[i + 1]));
      break;
    }
    if (arg.size() < 2 || arg.substr(0, 2) != "--") {
      if (arg.size() > 1 && arg.front() == '-') {
        return make_error("unknown shorthand flag " + quote(arg) + " (long flags take --)");
      }
      return make_error("unexpected argument " + quote(arg) +
                        " (a bool flag takes its value as --name=false)");
    }
    const std::string_view body = arg.substr(2);
    const auto eq = body.find('=');
    const std::string_view name = body.substr(0, eq);
    if (name.empty() || name.front() == '-') return make_error("bad flag syntax: " + quote(arg));
    const FlagSpec* flag = find_flag(name);
    if (flag == nullptr) return make_error("unknown flag: --" + std::string(name));
    std::string_view value;
    if (eq != std::string_view::npos) {
      value = body.substr(eq + 1);
    } else if (flag->kind == Kind::Bool) {
      value = "true";  // pflag never consumes the next argument for a bool flag
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return make_error("flag needs an argument: --" + std::string(flag->name));
    }
    if (Status s = apply(*flag, value, options); !s) return s.error();
    note_ignored(*flag, options);
  }
  if (Status s = complete_and_check(options); !s) return s.error();
  return options;
}

std::string usage() {
  static constexpr std::pair<Group, std::string_view> kTitles[] = {
      {Group::Required, "Required"},
      {Group::Upstream, "Cloud kube-apiservers"},
      {Group::Serving, "Listeners and proxying"},
      {Group::Node, "Node, mode and storage"},
      {Group::Filters, "Response filters"},
      {Group::General, "General"},
      {Group::Compat, "YurtHub flags accepted for compatibility (ignored)"},
  };
  static constexpr std::string_view kTypeNames[] = {"string", "strings", "int", "", "duration"};
  constexpr std::size_t kHelpColumn = 54;
  std::string out =
      "Usage: yurthub --server-addr=https://HOST[:PORT][,...] --node-name=NAME [flags]\n";
  for (const auto& [group, title] : kTitles) {
    out += "\n" + std::string(title) + ":\n";
    for (const FlagSpec& f : kFlags) {
      if (f.group != group) continue;
      std::string line = "      --" + std::string(f.name);
      const std::string_view type = kTypeNames[static_cast<int>(f.kind)];
      if (!type.empty()) line += " " + std::string(type);
      line.append(line.size() < kHelpColumn ? kHelpColumn - line.size() : 1, ' ');
      line += f.help;
      if (!f.default_text.empty()) line += " (default " + std::string(f.default_text) + ")";
      if (std::holds_alternative<std::monostate>(f.target)) {
        line += " (accepted for compatibility; ignored)";
      }
      out += line + "\n";
    }
  }
  return out;
}

}  // namespace yurthub::hub
