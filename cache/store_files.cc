// The cache directory and the registry of open caches; see store_files.h.
#include "cache/store_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "base/log.h"

namespace yurthub::cache {
namespace {

constexpr mode_t kDirMode = 0700;  // the cache holds secrets and service-account tokens

struct OpenDirectories {
  std::mutex mutex;  // guards ids
  std::set<DirectoryId> ids;
};

OpenDirectories& open_directories() {
  static auto* dirs = new OpenDirectories;  // never destroyed: environments may close at exit
  return *dirs;
}

}  // namespace

std::string strip_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

Status prepare_cache_directory(const std::string& dir, bool read_only) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT || read_only) {
      return make_error("cache directory " + dir + ": " + std::strerror(errno));
    }
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) return make_error("cannot create " + parent.string() + ": " + ec.message());
    if (::mkdir(dir.c_str(), kDirMode) != 0 && errno != EEXIST) {
      return make_error("cannot create cache directory " + dir + ": " + std::strerror(errno));
    }
    return {};
  }
  if (!S_ISDIR(st.st_mode)) return make_error("cache directory " + dir + " is not a directory");
  if (read_only && ::access((dir + "/data.mdb").c_str(), F_OK) != 0) {
    return make_error("no cache in " + dir + " (no data.mdb): the hub has not stored anything yet");
  }
  if (!read_only && (st.st_mode & 077) != 0) {
    YH_LOG(Warning) << "cache directory " << dir << " is accessible to other users (mode "
                    << std::oct << (st.st_mode & 0777) << std::dec
                    << "); it holds secrets and tokens: chmod 700 it";
  }
  return {};
}

Result<DirectoryId> register_open_directory(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return make_error("cache directory " + dir + ": " + std::strerror(errno));
  }
  std::lock_guard lock(open_directories().mutex);
  const DirectoryId id{st.st_dev, st.st_ino};
  if (!open_directories().ids.insert(id).second) {
    return make_error(ErrorCode::Busy, "cache " + dir + " is already open in this process");
  }
  return id;
}

void unregister_open_directory(DirectoryId id) {
  std::lock_guard lock(open_directories().mutex);
  open_directories().ids.erase(id);
}

}  // namespace yurthub::cache
