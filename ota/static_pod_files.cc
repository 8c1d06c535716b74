// A static pod's manifest replaced safely; see static_pod_files.h.
#include "ota/static_pod_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace yurthub::ota {
namespace {

std::string errno_text() { return std::strerror(errno); }

// Closes a descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

// A plain file name: not empty, no '/', not hidden (kubelet skips those) nor "." or "..".
bool plain_file_name(std::string_view name) {
  return !name.empty() && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos && name.front() != '.';
}

// The upgrade directory, created 0755 when absent, opened without following a symlink, and
// checked: owned by root or this process's user, writable by nobody else.
Result<int> open_upgrade_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return make_error("creating " + path + ": " + errno_text());
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return make_error("opening " + path +
                      " (it must be a directory, not a symlink): " + errno_text());
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string why = errno_text();
    ::close(fd);
    return make_error("reading " + path + ": " + why);
  }
  if ((st.st_uid != 0 && st.st_uid != ::geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    ::close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return make_error(ErrorCode::PermissionDenied,
                      "refusing " + path + ": it is owned by uid " + std::to_string(st.st_uid) +
                          " with mode " + mode +
                          "; it must belong to root or the hub's user and be writable by nobody "
                          "else: remove it and the hub creates it");
  }
  return fd;
}

// Writes `content` as `name` in directory `dir_fd`: a new temporary file, then a rename over
// `name` (replacing, never following, whatever is there).
Status write_file_at(int dir_fd, const std::string& dir, const std::string& name,
                     std::string_view content, mode_t mode) {
  static std::atomic<unsigned> counter{0};
  const std::string temp = "." + name + ".yurthub-" + std::to_string(::getpid()) + "-" +
                           std::to_string(counter.fetch_add(1));
  Fd out(
      ::openat(dir_fd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!out.ok()) return make_error("creating " + dir + "/" + temp + ": " + errno_text());
  auto fail = [&](const std::string& what) {
    const std::string why = errno_text();
    ::unlinkat(dir_fd, temp.c_str(), 0);
    return make_error(what + " " + dir + "/" + temp + ": " + why);
  };
  for (std::size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(out.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("writing");
    done += static_cast<std::size_t>(n);
  }
  if (::fchmod(out.get(), mode) != 0) return fail("setting the mode of");
  if (::fsync(out.get()) != 0) return fail("syncing");
  if (::renameat(dir_fd, temp.c_str(), dir_fd, name.c_str()) != 0) {
    return fail("renaming to " + name);
  }
  return {};
}

// The content and permission bits of `path` (at most kMaxManifestBytes).
Result<std::pair<std::string, mode_t>> read_manifest(const std::string& path) {
  Fd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.ok()) return make_error("reading the current manifest " + path + ": " + errno_text());
  struct stat st {};
  if (::fstat(in.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return make_error("the current manifest " + path + " is not a regular file");
  }
  std::string content;
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(in.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error("reading the current manifest " + path + ": " + errno_text());
    if (n == 0) break;
    content.append(buffer, static_cast<std::size_t>(n));
    if (content.size() > kMaxManifestBytes) {
      return make_error("the current manifest " + path + " is larger than 4 MiB");
    }
  }
  return std::pair{std::move(content), static_cast<mode_t>(st.st_mode & 07777)};
}

}  // namespace

Status upgrade_static_pod_manifest(const StaticPodDirs& dirs, std::string_view manifest,
                                   std::string_view content) {
  if (!plain_file_name(manifest)) {
    return make_error(ErrorCode::InvalidArgument,
                      "the manifest name \"" + std::string(manifest) + "\" is not a file name");
  }
  const std::string name(manifest);
  auto upgrade_dir = open_upgrade_dir(dirs.upgrade_dir);
  if (!upgrade_dir) return upgrade_dir.error();
  Fd upgrade_fd(*upgrade_dir);
  // (1) the new manifest beside the backup, as node-servant's <manifest>.upgrade
  if (Status ok =
          write_file_at(upgrade_fd.get(), dirs.upgrade_dir, name + ".upgrade", content, 0600);
      !ok) {
    return ok;
  }
  // (2) the backup of the current manifest
  const std::string manifest_path = dirs.manifest_dir + "/" + name + ".yaml";
  auto current = read_manifest(manifest_path);
  if (!current) return current.error();
  if (Status ok =
          write_file_at(upgrade_fd.get(), dirs.upgrade_dir, name + ".bak", current->first, 0600);
      !ok) {
    return ok;
  }
  // (3) the new manifest in kubelet's directory, with the current one's permissions
  Fd manifest_fd(::open(dirs.manifest_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!manifest_fd.ok()) return make_error("opening " + dirs.manifest_dir + ": " + errno_text());
  return write_file_at(manifest_fd.get(), dirs.manifest_dir, name + ".yaml", content,
                       current->second);
}

}  // namespace yurthub::ota
