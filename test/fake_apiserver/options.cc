// Flag parsing; see options.h.
#include "test/fake_apiserver/options.h"

#include <charconv>
#include <string_view>

namespace yurthub::fake {
namespace {

template <class T>
Status parse_number(std::string_view name, std::string_view text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return make_error("--" + std::string(name) + ": not a number: " + std::string(text));
  }
  return {};
}

// "a,b,,c" → {a, b, c}: a comma list, empty entries dropped.
std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

Status apply_flag(Options& o, std::string_view name, std::string_view value) {
  std::string v(value);
  if (name == "cert")
    o.cert_file = v;
  else if (name == "key")
    o.key_file = v;
  else if (name == "client-ca")
    o.client_ca_file = v;
  else if (name == "token-file")
    o.token_file = v;
  else if (name == "bind")
    o.bind = v;
  else if (name == "port")
    return parse_number(name, value, o.port);
  else if (name == "seed")
    o.seeds.push_back(v);
  else if (name == "deny-user")
    o.deny_users.push_back(v);
  else if (name == "generate-node")
    o.generate_node = v;
  else if (name == "csr-signing-cert")
    o.csr_signing_cert = v;
  else if (name == "csr-signing-key")
    o.csr_signing_key = v;
  else if (name == "cluster-info-server")
    o.cluster_info_server = v;
  else if (name == "service-account-key-file")
    o.service_account_key_file = v;
  else if (name == "issuer-discovery-groups")
    o.issuer_discovery_groups = split_list(value);
  else if (name == "watch-list") {
    if (v != "true" && v != "false") return make_error("--watch-list: want true or false");
    o.watch_list = v == "true";
  } else if (name == "csr-auto-approve") {
    if (v != "true" && v != "false") return make_error("--csr-auto-approve: want true or false");
    o.csr_auto_approve = v == "true";
  } else if (name == "csr-cert-lifetime-seconds") {
    long long seconds = 0;
    Status s = parse_number(name, value, seconds);
    if (!s.ok()) return s;
    if (seconds <= 0) return make_error("--csr-cert-lifetime-seconds must be > 0");
    o.csr_cert_lifetime = std::chrono::seconds(seconds);
  } else if (name == "history")
    return parse_number(name, value, o.history);
  else if (name == "watch-queue")
    return parse_number(name, value, o.watch_queue);
  else if (name == "generate-pods")
    return parse_number(name, value, o.generate_pods);
  else if (name == "generate-pod-bytes")
    return parse_number(name, value, o.generate_pod_bytes);
  else if (name == "bookmark-interval-ms") {
    long long ms = 0;
    Status s = parse_number(name, value, ms);
    if (!s.ok()) return s;
    o.bookmark_interval = std::chrono::milliseconds(ms);
  } else if (name == "v") {
    int level = 0;
    Status s = parse_number(name, value, level);
    if (!s.ok()) return s;
    o.verbose = level >= 4;
  } else {
    return make_error("unknown flag --" + std::string(name));
  }
  return {};
}

}  // namespace

Result<Options> parse_options(int argc, const char* const* argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      o.help = true;
      continue;
    }
    if (!arg.starts_with("--")) return make_error("unexpected argument " + std::string(arg));
    arg.remove_prefix(2);
    auto eq = arg.find('=');
    if (eq == std::string_view::npos) {
      return make_error("flag --" + std::string(arg) + " needs a value (--name=value)");
    }
    Status s = apply_flag(o, arg.substr(0, eq), arg.substr(eq + 1));
    if (!s.ok()) return s.error();
  }
  if (o.help) return o;
  if (o.cert_file.empty() || o.key_file.empty() || o.client_ca_file.empty()) {
    return make_error("--cert, --key and --client-ca are required");
  }
  if (o.csr_signing_cert.empty() != o.csr_signing_key.empty()) {
    return make_error("--csr-signing-cert and --csr-signing-key go together");
  }
  if (o.history == 0) return make_error("--history must be at least 1");
  if (o.bookmark_interval.count() <= 0) return make_error("--bookmark-interval-ms must be > 0");
  return o;
}

const char* usage() {
  return "usage: fake_apiserver --cert=FILE --key=FILE --client-ca=FILE [--token-file=FILE]\n"
         "         [--bind=127.0.0.1] [--port=0] [--seed=FILE.json]... [--history=1000]\n"
         "         [--bookmark-interval-ms=60000] [--watch-queue=10000] [--watch-list=true]\n"
         "         [--deny-user=NAME]...\n"
         "         [--generate-pods=N --generate-pod-bytes=B --generate-node=NODE]\n"
         "         [--csr-signing-cert=FILE --csr-signing-key=FILE] [--csr-auto-approve=false]\n"
         "         [--csr-cert-lifetime-seconds=31536000] [--cluster-info-server=URL|self]\n"
         "         [--service-account-key-file=FILE]\n"
         "         [--issuer-discovery-groups=system:serviceaccounts[,GROUP...]] [--v=N]\n";
}

}  // namespace yurthub::fake
