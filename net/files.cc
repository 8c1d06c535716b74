// Configuration files read from disk; see files.h.
#include "net/files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace yurthub::net {

Result<std::string> read_config_file(const std::string& path, std::size_t max_bytes) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                             std::fclose);
  if (!file) return make_error("cannot read \"" + path + "\": " + std::strerror(errno));
  std::string out;
  char buf[8192];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, file.get())) > 0) {
    if (out.size() + n > max_bytes) {
      return make_error("cannot read \"" + path + "\": larger than " +
                        std::to_string(max_bytes >> 10) + " KiB");
    }
    out.append(buf, n);
  }
  if (std::ferror(file.get()) != 0) {
    return make_error("cannot read \"" + path + "\": " + std::strerror(errno));
  }
  return out;
}

Result<kube::Credentials> load_kubeconfig(const std::string& path) {
  auto text = read_config_file(path);
  if (!text) return make_error("kubeconfig: " + text.error().message);
  return kube::parse_kubeconfig(*text, path,
                                [](const std::string& file) { return read_config_file(file); });
}

}  // namespace yurthub::net
