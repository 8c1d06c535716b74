// yurthub: the node's proxy to the cloud apiserver. Thin main: flags -> options -> credentials
// -> Hub. A bad flag or unreadable credential is one line on stderr and exit status 2; a listener
// that cannot bind is exit status 1.
#include <iostream>

#include "hub/hub.h"
#include "hub/kubeconfig.h"
#include "hub/log.h"
#include "hub/options.h"
#include "hub/version.h"

namespace {

int fail(const std::string& message, int code) {
  std::cerr << "yurthub: " << message << "\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace yurthub;
  auto options = hub::parse_flags(argc, argv);
  if (!options) return fail(options.error().message, 2);
  if (options->show_help) {
    std::cout << hub::usage();
    return 0;
  }
  if (options->show_version) {
    std::cout << "yurthub " << hub::kVersion << "\n";
    return 0;
  }
  log::set_min_level(options->verbosity >= 4 ? log::Level::Debug : log::Level::Info);
  for (const auto& flag : options->ignored_flags) {
    YH_LOG(Warning) << "flag " << flag << " is accepted for compatibility with YurtHub and ignored";
  }
  auto credentials = hub::load_kubeconfig(options->kubeconfig);
  if (!credentials) return fail(credentials.error().message, 2);
  auto upstream_tls = hub::make_upstream_tls(*credentials);
  if (!upstream_tls) return fail(upstream_tls.error().message, 2);
  std::shared_ptr<boost::asio::ssl::context> server_tls;
  if (!options->tls_cert_file.empty() || !options->tls_private_key_file.empty()) {
    auto loaded = hub::make_server_tls(options->tls_cert_file, options->tls_private_key_file);
    if (!loaded) return fail(loaded.error().message, 2);
    server_tls = std::move(*loaded);
  }

  YH_LOG(Info) << "yurthub " << hub::kVersion << " starting for node " << options->node_name;
  hub::Hub hub(std::move(*options), std::move(*upstream_tls), std::move(server_tls));
  if (auto started = hub.start(); !started) return fail(started.error().message, 1);
  return hub.run();
}
