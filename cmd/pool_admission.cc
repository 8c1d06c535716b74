// pool-admission: flags -> the webhook's HTTPS listener and the node labeller on one thread, until
// SIGTERM or SIGINT. Everything it does is in admission/ (docs/pool-admission.md).
#include <csignal>
#include <cstdlib>
#include <exception>
#include <iostream>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "admission/api_client.h"
#include "admission/node_labeller.h"
#include "admission/options.h"
#include "admission/webhook_server.h"
#include "base/log.h"

namespace {

using namespace yurthub;  // NOLINT(google-build-using-namespace): a main's short names

const char* env(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): before any thread
  return value ? value : "";
}

int run(int argc, char** argv) {
  auto options = admission::parse_options(argc, argv);
  if (!options) {
    std::cerr << "pool-admission: " << options.error().message << "\n";
    return 2;
  }
  if (options->help) {
    std::cout << admission::usage();
    return 0;
  }
  log::set_min_level(options->verbosity >= 4 ? log::Level::Debug : log::Level::Info);
  boost::asio::io_context io(1);

  auto cert =
      admission::ServingCertificate::load(options->tls_cert_file, options->tls_private_key_file);
  if (!cert) {
    YH_LOG(Error) << cert.error().message;
    return 1;
  }
  auto server = admission::WebhookServer::listen(
      io, options->bind_address, options->secure_port, std::move(*cert),
      admission::WebhookConfig{options->labeller_username});
  if (!server) {
    YH_LOG(Error) << server.error().message;
    return 1;
  }

  std::unique_ptr<admission::NodeLabeller> labeller;
  if (options->node_labeller) {
    auto client = options->kubeconfig.empty()
                      ? admission::ApiClient::in_cluster(
                            env("KUBERNETES_SERVICE_HOST"), env("KUBERNETES_SERVICE_PORT"),
                            "/var/run/secrets/kubernetes.io/serviceaccount")
                      : admission::ApiClient::from_kubeconfig(options->kubeconfig);
    if (!client) {
      YH_LOG(Error) << client.error().message;
      return 1;
    }
    YH_LOG(Info) << "node labeller: apiserver " << (*client)->server_url();
    labeller = std::make_unique<admission::NodeLabeller>(io.get_executor(), *client);
    labeller->start();
  }
  (*server)->start();
  const auto endpoint = (*server)->local_endpoint();
  YH_LOG(Info) << "webhook listening on " << endpoint.address().to_string() << ":"
               << endpoint.port();

  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](const boost::system::error_code& ec, int signo) {
    if (ec) return;
    YH_LOG(Info) << "signal " << signo << ": stopping";
    (*server)->stop();
    if (labeller) labeller->stop();
    io.stop();
  });
  io.run();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "pool-admission: " << e.what() << "\n";
    return 1;
  }
}
