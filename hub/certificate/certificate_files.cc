// The hub's credential files; see certificate_files.h.
#include "hub/certificate/certificate_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <vector>

#include "base/clock.h"
#include "hub/certificate/renewal.h"
#include "kube/kubeconfig.h"

namespace yurthub::hub {
namespace fs = std::filesystem;

namespace {

Error io_error(const std::string& what, const fs::path& path, int err) {
  return make_error(what + " " + path.string() + ": " + std::strerror(err));
}

Status sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open", dir, errno);
  const bool ok = ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) return io_error("cannot sync", dir, err);
  return {};
}

Status make_directory(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error("cannot create " + dir.string() + ": " + ec.message());
  return {};
}

}  // namespace

Status write_file_atomically(const fs::path& path, const std::string& contents, unsigned mode) {
  if (Status made = make_directory(path.parent_path()); !made) return made;
  const fs::path temporary = path.string() + ".tmp";
  // A leftover of a crash, or a link someone planted to make the hub write a key elsewhere, is
  // removed (unlink removes a link, never its target); then the file is created new, never
  // followed through a link, never opened if it is there again. A failure leaves no file behind.
  if (::unlink(temporary.c_str()) != 0 && errno != ENOENT) {
    return io_error("cannot remove", temporary, errno);
  }
  const int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return io_error("cannot create", temporary, errno);
  auto fail = [&](const char* what, int err) {
    ::close(fd);
    ::unlink(temporary.c_str());
    return io_error(what, temporary, err);
  };
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("cannot write", errno);
    written += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0) return fail("cannot sync", errno);
  ::close(fd);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temporary.c_str());
    return io_error("cannot rename", path, err);
  }
  return sync_directory(path.parent_path());
}

std::optional<std::string> unsafe_directory_warning(const fs::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return std::nullopt;
  if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
    return dir.string() + " is owned by uid " + std::to_string(st.st_uid) +
           ", who can replace the hub's credentials and cache: chown it to root";
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return dir.string() + " (mode " + mode +
           ") may be written by other users, who could plant files the hub reads as its "
           "credentials: chmod go-w it";
  }
  return std::nullopt;
}

Status CertificateFiles::save_pair(const std::string& certificate_pem, const std::string& key_pem,
                                   Pair pair) const {
  const fs::path dir = root_ / "pki";
  const std::string name =
      prefix(pair) + utc_text(base::WallClock::now(), "%Y-%m-%d-%H-%M-%S") + ".pem";
  if (Status s = write_file_atomically(dir / name, certificate_pem + key_pem, 0600); !s) return s;
  std::error_code ec;
  const fs::path current = current_pem(pair);
  const fs::path previous = fs::read_symlink(current, ec);
  // A new symlink under a temporary name, renamed over the old one: never a moment without it.
  const fs::path link = current.string() + ".tmp";
  fs::remove(link, ec);
  if (::symlink(name.c_str(), link.c_str()) != 0) return io_error("cannot link", link, errno);
  if (::rename(link.c_str(), current.c_str()) != 0)
    return io_error("cannot rename", current, errno);
  if (Status s = sync_directory(dir); !s) return s;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    const bool ours = file.starts_with(prefix(pair)) && file.ends_with(".pem") &&
                      file != current.filename() &&
                      (pair == Pair::Serving || !file.starts_with(prefix(Pair::Serving)));
    if (ours && file != name && entry.path().filename() != previous.filename()) {
      fs::remove(entry.path(), ec);
    }
  }
  return {};
}

Status CertificateFiles::save_ca(const std::string& ca_pem) const {
  return write_file_atomically(ca_file(), ca_pem, 0644);
}

Status CertificateFiles::save_kubeconfig(const std::string& server) const {
  kube::KubeconfigFile file;
  file.server = server;
  file.ca_file = ca_file().string();
  file.client_file = current_pem().string();
  return write_file_atomically(kubeconfig(), kube::write_kubeconfig(file), 0600);
}

Status CertificateFiles::save_bootstrap_kubeconfig(const std::string& server,
                                                   const std::string& token) const {
  kube::KubeconfigFile file;
  file.server = server;
  file.ca_file = ca_file().string();
  file.token = token;
  file.user = "token-bootstrap-client";
  return write_file_atomically(bootstrap_kubeconfig(), kube::write_kubeconfig(file), 0600);
}

Status CertificateFiles::forget(const fs::path& keep) const {
  std::vector<fs::path> doomed = {kubeconfig(), bootstrap_kubeconfig(), ca_file()};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root_ / "pki", ec)) {
    const std::string file = entry.path().filename().string();
    if (file.starts_with(prefix(Pair::Client)) &&
        (file.ends_with(".pem") || file.ends_with(".pem.tmp"))) {
      doomed.push_back(entry.path());
    }
  }
  for (const auto& path : doomed) {
    if (!keep.empty() && fs::equivalent(path, keep, ec)) continue;
    fs::remove(path, ec);
    if (ec) return make_error("cannot remove " + path.string() + ": " + ec.message());
  }
  return {};
}

}  // namespace yurthub::hub
