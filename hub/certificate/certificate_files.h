// Where the hub keeps its own credentials under --root-dir, as YurtHub lays them out:
//   <root>/pki/ca.crt                    the cluster CA
//   <root>/pki/yurthub-current.pem       symlink to the current yurthub-<time>.pem (certificate
//                                        and key in one file, as client-go's FileStore writes it)
//   <root>/pki/yurthub-server-current.pem  the same for the serving certificate of 10268
//   <root>/yurthub.conf                  kubeconfig using the two above
//   <root>/bootstrap-hub.conf            kubeconfig with the bootstrap token (--join-token,
//   /v1/token)
// Every file is written whole to a temporary name, synced, then renamed over the old one, so a
// crash never leaves a half-written credential. Called by ClientCertificateManager.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "base/result.h"

namespace yurthub::hub {

// Which certificate and key pair: the hub's client identity, or the HTTPS port's.
enum class Pair { Client, Serving };

class CertificateFiles {
 public:
  explicit CertificateFiles(std::filesystem::path root) : root_(std::move(root)) {}

  std::filesystem::path ca_file() const { return root_ / "pki" / "ca.crt"; }
  std::filesystem::path current_pem(Pair pair = Pair::Client) const {
    return root_ / "pki" / (prefix(pair) + "current.pem");
  }
  std::filesystem::path kubeconfig() const { return root_ / "yurthub.conf"; }
  std::filesystem::path bootstrap_kubeconfig() const { return root_ / "bootstrap-hub.conf"; }

  // Stores a new certificate and key as pki/yurthub[-server]-<time>.pem and points the pair's
  // current.pem at it; keeps the one before (an open connection may still need its file) and
  // removes older ones.
  Status save_pair(const std::string& certificate_pem, const std::string& key_pem,
                   Pair pair = Pair::Client) const;
  Status save_ca(const std::string& ca_pem) const;
  // Writes yurthub.conf for `server` using ca.crt and yurthub-current.pem.
  Status save_kubeconfig(const std::string& server) const;
  Status save_bootstrap_kubeconfig(const std::string& server, const std::string& token) const;

  // Removes every file listed above (the certificates and keys of both pairs, ca.crt and both
  // kubeconfigs) but `keep` (an operator's --bootstrap-file may live under the root): what the hub
  // keeps for one cluster, forgotten when it is pointed at another. Leaves other files alone.
  Status forget(const std::filesystem::path& keep) const;

 private:
  static std::string prefix(Pair pair) {
    return pair == Pair::Client ? "yurthub-" : "yurthub-server-";
  }

  std::filesystem::path root_;
};

// Writes `contents` to `path` atomically (temporary file, fsync, rename, fsync of the directory),
// with `mode` permissions.
Status write_file_atomically(const std::filesystem::path& path, const std::string& contents,
                             unsigned mode);

// A warning when users other than the owner may write `dir` (group or others write bits, the
// sticky bit notwithstanding: they could still plant names the hub then uses), or it is owned by
// someone other than root or this process's user; nullopt when it is safe or does not exist.
std::optional<std::string> unsafe_directory_warning(const std::filesystem::path& dir);

}  // namespace yurthub::hub
