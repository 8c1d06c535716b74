// pool-admission's flags; see options.h.
#include "admission/options.h"

#include <charconv>
#include <map>
#include <string_view>

namespace yurthub::admission {
namespace {

Result<unsigned long> parse_number(const std::string& flag, const std::string& text,
                                   unsigned long max) {
  unsigned long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value > max) {
    return make_error(ErrorCode::InvalidArgument,
                      "--" + flag + "=" + text + ": not a number up to " + std::to_string(max));
  }
  return value;
}

Status set(Options& o, const std::string& flag, const std::string& value) {
  if (flag == "kubeconfig") {
    o.kubeconfig = value;
  } else if (flag == "tls-cert-file") {
    o.tls_cert_file = value;
  } else if (flag == "tls-private-key-file") {
    o.tls_private_key_file = value;
  } else if (flag == "bind-address") {
    o.bind_address = value;
  } else if (flag == "labeller-username") {
    o.labeller_username = value;
  } else if (flag == "secure-port") {
    auto port = parse_number(flag, value, 65535);
    if (!port) return port.error();
    o.secure_port = static_cast<unsigned short>(*port);
  } else if (flag == "v") {
    auto level = parse_number(flag, value, 10);
    if (!level) return level.error();
    o.verbosity = static_cast<int>(*level);
  } else if (flag == "node-labeller") {
    if (value != "true" && value != "false") {
      return make_error(ErrorCode::InvalidArgument, "--node-labeller=" + value + ": true or false");
    }
    o.node_labeller = value == "true";
  } else {
    return make_error(ErrorCode::InvalidArgument, "unknown flag --" + flag + "\n" + usage());
  }
  return Status{};
}

}  // namespace

Result<Options> parse_options(int argc, const char* const* argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      o.help = true;
      continue;
    }
    if (!arg.starts_with("--") || arg.size() == 2) {
      return make_error(ErrorCode::InvalidArgument, "unexpected argument " + std::string(arg));
    }
    const auto eq = arg.find('=');
    std::string flag(arg.substr(2, eq == std::string_view::npos ? std::string_view::npos : eq - 2));
    std::string value;
    if (eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return make_error(ErrorCode::InvalidArgument, "--" + flag + " needs a value");
    }
    if (Status done = set(o, flag, value); !done) return done.error();
  }
  if (!o.help && (o.tls_cert_file.empty() || o.tls_private_key_file.empty())) {
    return make_error(ErrorCode::InvalidArgument,
                      "--tls-cert-file and --tls-private-key-file are required");
  }
  return o;
}

std::string usage() {
  return R"(Usage: pool-admission --tls-cert-file=FILE --tls-private-key-file=FILE [flags]

The cloud-side half of OpenYurt's hostNetwork NodePools for clusters without yurt-manager
(docs/pool-admission.md): the admission webhook (POST /mutate-pods, POST /validate-nodes, over
HTTPS) and the node labeller (nodepool.openyurt.io/hostnetwork on every node of a NodePool).

  --kubeconfig=FILE             the labeller's apiserver and identity; none: the pod's service
                                account (KUBERNETES_SERVICE_HOST/PORT)
  --tls-cert-file=FILE          the webhook's serving certificate chain (PEM), re-read on change
  --tls-private-key-file=FILE   its key (PEM), re-read on change
  --secure-port=9443            the webhook's HTTPS port (0: any free port)
  --bind-address=0.0.0.0        the address it listens on
  --labeller-username=NAME      the only user /validate-nodes lets change the label
                                (default system:serviceaccount:kube-system:pool-admission)
  --node-labeller=true          false: serve the webhook only
  --v=0                         4 or more: debug logging
)";
}

}  // namespace yurthub::admission
