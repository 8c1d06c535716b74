// pool-admission's command line (docs/pool-admission.md, "Flags"): `--name=value` or
// `--name value`. Pure; called by cmd/pool_admission.cc, tested in test/admission.
#pragma once

#include <string>

#include "admission/node_label_guard.h"
#include "base/result.h"

namespace yurthub::admission {

struct Options {
  std::string kubeconfig;            // "" = in-cluster (the pod's service account)
  std::string tls_cert_file;         // required: the webhook serves HTTPS only
  std::string tls_private_key_file;  // required
  unsigned short secure_port = 9443;
  std::string bind_address = "0.0.0.0";
  std::string labeller_username = std::string(kDefaultLabellerUsername);
  bool node_labeller = true;  // false: the webhook alone (another controller sets the label)
  int verbosity = 0;          // --v: 4 or more logs at debug level
  bool help = false;
};

// Parses argv[1..argc). Errors name the flag: unknown, missing value, bad port or boolean, or a
// required flag absent (unless --help).
Result<Options> parse_options(int argc, const char* const* argv);

std::string usage();

}  // namespace yurthub::admission
