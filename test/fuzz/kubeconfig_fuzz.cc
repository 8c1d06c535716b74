// Fuzz target for net/files.h load_kubeconfig() (kube/kubeconfig.h parse_kubeconfig), which reads
// the hub's own kubeconfig (YAML) at startup. The input is written to a file in a private temporary
// directory (relative paths in it resolve there) and loaded. Oracle: success means the documented
// minimum (a CA or insecure-skip-tls-verify; a client certificate with its key, or a token).
#include "kube/kubeconfig.h"
#include "net/files.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "test/fuzz/fuzz_support.h"

using namespace yurthub;

namespace {

const std::string& kubeconfig_path() {
  static const std::string path = [] {
    char dir[] = "/tmp/yurthub-kubeconfig-fuzz-XXXXXX";
    if (mkdtemp(dir) == nullptr) std::abort();
    return std::string(dir) + "/kubeconfig";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = kubeconfig_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  auto credentials = net::load_kubeconfig(path);
  if (!credentials) return 0;
  fuzz::check(!credentials->ca_pem.empty() || credentials->insecure_skip_tls_verify,
              "loaded without a CA or insecure-skip-tls-verify");
  fuzz::check(credentials->has_client_certificate() ? !credentials->client_key_pem.empty()
                                                    : !credentials->token.empty(),
              "loaded without a usable identity");
  return 0;
}
