// Parses the hub's own identity from a kubeconfig (YAML, as written by kubeadm, kubectl, yurtadm
// or YurtHub's own <root-dir>/yurthub.conf): the current context's cluster CA and server, and the
// user's client certificate/key or bearer token. Relative file paths resolve against the
// kubeconfig's directory, as kubectl does; the files are read by the caller's FileReader (this
// layer does no I/O: net/files.h loads a kubeconfig from disk).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace yurthub::kube {

struct Credentials {
  std::string server;  // cluster.server of the current context ("" if absent)
  std::string ca_pem;  // certificate-authority-data (decoded) or certificate-authority file
  std::string client_cert_pem;  // client-certificate-data or client-certificate file
  std::string client_key_pem;   // client-key-data or client-key file
  std::string token;            // token, or the contents of tokenFile (trailing newline removed)
  std::string tls_server_name;  // cluster.tls-server-name
  bool insecure_skip_tls_verify = false;  // cluster.insecure-skip-tls-verify

  bool has_client_certificate() const { return !client_cert_pem.empty(); }
};

// Reads a file a kubeconfig names (its resolved path): its contents, or an error naming it.
using FileReader = std::function<Result<std::string>(const std::string& path)>;

// Validates the kubeconfig `text` found at `path`, reading the files it names with `read`. Errors
// (bad YAML, no current context, a referenced file missing, bad base64, neither CA nor
// insecure-skip, a cert without a key, neither cert nor token) name the file and the field.
Result<Credentials> parse_kubeconfig(std::string_view text, const std::string& path,
                                     const FileReader& read);

// The first cluster of a kubeconfig given as text, with no context or user needed: the
// kube-public/cluster-info ConfigMap's kubeconfig (server and certificate-authority-data).
Result<Credentials> parse_cluster_kubeconfig(const std::string& text);

// A kubeconfig as the hub writes its own (<root-dir>/yurthub.conf, bootstrap-hub.conf): one
// cluster, one user, one context. Empty fields are left out; file paths are written as given.
struct KubeconfigFile {
  std::string server;
  std::string ca_file;      // certificate-authority
  std::string client_file;  // client-certificate and client-key (one PEM holding both)
  std::string token;
  std::string user = "default-auth";
};
std::string write_kubeconfig(const KubeconfigFile& file);

}  // namespace yurthub::kube
