// The file steps of a static pod's OTA upgrade, as YurtHub's StaticPodUpgrader with node-servant's
// OTA mode (pkg/node-servant/static-pod-upgrade): the new manifest (the YurtStaticSet ConfigMap's
// one value) is written to <upgrade_dir>/<manifest>.upgrade, the current
// <manifest_dir>/<manifest>.yaml is backed up to <upgrade_dir>/<manifest>.bak, and the new
// manifest replaces it; kubelet then restarts the static pod.
//
// Unlike upstream, no file is written through a path someone else could have planted. The upgrade
// directory defaults to /tmp/manifests, under a world-writable /tmp: it is created 0755 when
// absent, and used only when it is a real directory (not a symlink: O_NOFOLLOW) owned by root or
// the hub's user and writable by nobody else; otherwise the upgrade fails and says so. Every file
// is written to a new temporary name (O_CREAT|O_EXCL|O_NOFOLLOW, relative to the directory
// opened once) and renamed over its name, so an existing symlink is replaced, never followed,
// and kubelet never reads a half-written manifest (the temporary name starts with '.', which
// kubelet's manifest source skips). The replaced manifest keeps its permission bits; the .upgrade
// and .bak copies are 0600. Called by ota/ota_handler.cc; blocking file I/O on small files.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace yurthub::ota {

struct StaticPodDirs {
  std::string manifest_dir = "/etc/kubernetes/manifests";  // kubelet's --pod-manifest-path
  std::string upgrade_dir = "/tmp/manifests";              // node-servant's DefaultUpgradePath
};

// The largest manifest read for the backup (a ConfigMap holds at most 1 MiB).
inline constexpr std::size_t kMaxManifestBytes = 4 * 1024 * 1024;

// Replaces static pod manifest `manifest` (the ConfigMap's key: a file name without ".yaml")
// with `content`, in the three steps above. An error says which step failed and why: a name that
// is not a plain file name, an unusable upgrade directory, a missing current manifest, I/O.
Status upgrade_static_pod_manifest(const StaticPodDirs& dirs, std::string_view manifest,
                                   std::string_view content);

}  // namespace yurthub::ota
