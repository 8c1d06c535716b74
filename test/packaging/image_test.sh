#!/usr/bin/env bash
# The container image test, registered by test/packaging/CMakeLists.txt as PackagingTest.image and
# skipped (exit 77) unless YURTHUB_IMAGE_TEST=1: building the image from cold (release build,
# debootstrap) takes far longer than CI can spare, see docs/operations.md "Static pod and image".
# Builds the image with cmd/packaging/build_image.sh (or takes ARCHIVE), checks the archive as
# `docker load` (manifest.json) and containerd/podman (OCI index) read it, unpacks it with umoci
# into a fresh root filesystem and runs the image's entrypoint chrooted there, with the /proc and
# /dev a runtime gives, in front of the fake apiserver; then kubectl, with no credentials, must get
# the node list and the hub's node identity through it. Needs root. Temp dir and port 0:
# parallel-safe.
#
# Usage: image_test.sh SOURCE_DIR FAKE_APISERVER [ARCHIVE]
set -euo pipefail
src=$1 fake_apiserver=$2 archive=${3:-${YURTHUB_IMAGE:-}}
node=edge-node-1

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
ok() { echo "ok: $*"; }

if [ "${YURTHUB_IMAGE_TEST:-}" != 1 ]; then
  echo "skipped: YURTHUB_IMAGE_TEST=1 builds the image and runs its hub (root, minutes)"
  exit 77
fi
[ "$(id -u)" -eq 0 ] || fail "needs root (chroot, mount namespaces)"
command -v umoci >/dev/null && command -v jq >/dev/null || bash "$src/scripts/setup.sh" image
kubectl=$(command -v kubectl) || fail "kubectl is not installed"

tmp=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  # Anything still chrooted in this test's image (only if a pid above was not the hub's).
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/root" 2>/dev/null) == "$tmp"/* ]] && kill -9 "${p#/proc/}" 2>/dev/null
  done
  # The hub's /proc and /dev mounts were in its own mount namespace, gone with it.
  rm -rf "$tmp"
}
trap cleanup EXIT

# wait_log FILE REGEX: polls FILE (20 s at most) for REGEX and prints its first capture group.
wait_log() {
  local file=$1 regex=$2 text
  for _ in $(seq 1 400); do
    text=$(cat "$file" 2>/dev/null || true)
    if [[ $text =~ $regex ]]; then
      echo "${BASH_REMATCH[1]}"
      return 0
    fi
    sleep 0.05
  done
  cat "$file" >&2
  fail "timed out waiting for '$regex' in $file"
}

if [ -z "$archive" ]; then
  bash "$src/cmd/packaging/build_image.sh" | tee "$tmp/build.log" >&2 ||
    fail "build_image.sh failed"
  archive=$(tail -1 "$tmp/build.log")
fi
[ -f "$archive" ] || fail "no image archive $archive"
ok "image archive $archive, $(du -h --apparent-size "$archive" | cut -f1)"

# --- the archive as loaders read it ----------------------------------------------------------
layout=$tmp/layout
mkdir "$layout"
tar -C "$layout" -xf "$archive"
[ "$(jq -r .imageLayoutVersion "$layout/oci-layout")" = 1.0.0 ] || fail "oci-layout"
name=$(jq -r '.manifests[0].annotations["io.containerd.image.name"]' "$layout/index.json")
tag=$(jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]' "$layout/index.json")
[ "${name##*:}" = "$tag" ] || fail "index.json names $name but tags $tag"
# blob FILE: FILE's name is its sha256, as every loader checks.
blob() {
  [ -f "$layout/$1" ] || fail "manifest.json names $1, not in the archive"
  [ "sha256:$(sha256sum <"$layout/$1" | cut -d' ' -f1)" = "sha256:${1##*/}" ] ||
    fail "$1 does not hash to its name"
}
# Docker's manifest.json: the config, and each layer, whose uncompressed sha256 is its diff_id.
[ "$(jq -r '.[0].RepoTags[0]' "$layout/manifest.json")" = "$name" ] || fail "manifest.json RepoTags"
config=$(jq -r '.[0].Config' "$layout/manifest.json")
blob "$config"
mapfile -t layers < <(jq -r '.[0].Layers[]' "$layout/manifest.json")
mapfile -t diff_ids < <(jq -r '.rootfs.diff_ids[]' "$layout/$config")
[ ${#layers[@]} -eq ${#diff_ids[@]} ] || fail "${#layers[@]} layers, ${#diff_ids[@]} diff_ids"
for i in "${!layers[@]}"; do
  blob "${layers[$i]}"
  diff_id=sha256:$(gzip -dc "$layout/${layers[$i]}" | sha256sum | cut -d' ' -f1)
  [ "$diff_id" = "${diff_ids[$i]}" ] ||
    fail "layer ${layers[$i]} does not uncompress to ${diff_ids[$i]}"
done
[ "$(jq -c .config.Entrypoint "$layout/$config")" = '["/usr/bin/yurthub"]' ] ||
  fail "entrypoint $(jq -c .config.Entrypoint "$layout/$config")"
[ "$(jq -c .config.Cmd "$layout/$config")" = null ] ||
  fail "cmd $(jq -c .config.Cmd "$layout/$config")"
ok "$name: manifest.json and index.json agree, ${#layers[@]} layer(s) hashed," \
  "entrypoint /usr/bin/yurthub"

# --- a fresh root filesystem from the image, as a runtime makes it ---------------------------
bundle=$tmp/bundle
umoci unpack --image "$layout:$tag" "$bundle" >"$tmp/unpack.log" 2>&1 ||
  { cat "$tmp/unpack.log" >&2; fail "umoci unpack"; }
rootfs=$bundle/rootfs
mapfile -t entrypoint < <(jq -r '.process.args[]' "$bundle/config.json")
path=$(jq -r '.process.env[] | select(startswith("PATH=")) | ltrimstr("PATH=")' \
  "$bundle/config.json")
[ "${entrypoint[*]}" = /usr/bin/yurthub ] || fail "the runtime would run ${entrypoint[*]}"
dpkg --root="$rootfs" -s yurthub 2>/dev/null | grep -qx 'Status: install ok installed' ||
  fail "dpkg in the image does not have yurthub installed"
[ -z "$(ls -A "$rootfs/var/lib/apt/lists")" ] || fail "apt lists left in the image"
ok "umoci unpack: a root filesystem with the yurthub package installed, no apt lists"

# in_image CMD...: CMD chrooted in the image's root, with a runtime's /proc and /dev, in a mount
# namespace of its own, with the image's PATH and nothing else of this environment. Every step
# execs the next, so `in_image ... &` makes $! CMD's pid. It execs: call it only in a subshell,
# `$(in_image ...)` or `in_image ... &`.
in_image() {
  exec unshare --mount --propagation private -- sh -c \
    'mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" && exec chroot "$0" "$@"' \
    "$rootfs" env -i PATH="$path" "$@"
}
version=$(in_image "${entrypoint[@]}" --version) || fail "the image's yurthub --version"
[ "$version" = "yurthub $tag" ] || fail "the image's hub says $version, its tag $tag"
ok "the image's hub runs chrooted: $version"

# The hub's files where the static pod mounts them (/var/lib/yurthub, /etc/kubernetes).
pki=$rootfs/var/lib/yurthub/pki
bash "$src/scripts/gen-certs.sh" "$pki" "$node" >/dev/null
"$fake_apiserver" --cert="$pki/apiserver.crt" --key="$pki/apiserver.key" --client-ca="$pki/ca.crt" \
  --token-file="$pki/tokens.csv" --port=0 \
  --seed="$src/test/testdata/fake_apiserver/demo-objects.json" >"$tmp/apiserver.log" 2>&1 &
pids+=($!)
api_port=$(wait_log "$tmp/apiserver.log" 'listening on 127\.0\.0\.1:([0-9]+)')

in_image "${entrypoint[@]}" --server-addr="https://127.0.0.1:$api_port" --node-name="$node" \
  --kubeconfig=/var/lib/yurthub/pki/hub.kubeconfig --disk-cache-path=/etc/kubernetes/cache \
  --proxy-port=0 --proxy-secure-port=0 --serve-port=0 --enable-dummy-if=false \
  >"$tmp/hub.log" 2>&1 &
hub_pid=$!
pids+=($hub_pid)
proxy_port=$(wait_log "$tmp/hub.log" 'proxy listening on 127\.0\.0\.1:([0-9]+)')
wait_log "$tmp/hub.log" 'apiserver (https://[^ ]+) is healthy' >/dev/null
# The process serving is the image's: its root is the unpacked image and every library it mapped
# comes from there (the kernel shows the paths from this, the outer, root).
[ "$(readlink "/proc/$hub_pid/root")" = "$rootfs" ] ||
  fail "the hub's root is $(readlink "/proc/$hub_pid/root"), not the image's"
libs=$(awk '$6 ~ /\.so/ {print $6}' "/proc/$hub_pid/maps" | sort -u)
[ -n "$libs" ] || fail "the hub maps no shared library"
outside=$(grep -v "^$rootfs/" <<<"$libs" || true)
[ -z "$outside" ] || fail "the hub maps libraries from outside the image: $outside"
ok "hub pid $hub_pid chrooted in the image, $(wc -l <<<"$libs") libraries all from the image," \
  "proxy on 127.0.0.1:$proxy_port"

k() {
  "$kubectl" --kubeconfig=/dev/null --server="http://127.0.0.1:$proxy_port" \
    --cache-dir="$tmp/kcache" --request-timeout=10s "$@"
}
nodes=$(k get nodes -o jsonpath='{.items[*].metadata.name}') || fail "kubectl get nodes: $nodes"
[ "$nodes" = "edge-node-1 edge-node-2" ] || fail "kubectl get nodes through the hub: $nodes"
ok "kubectl get nodes through the image's hub: $nodes"
# kubectl sent no credentials: the apiserver saw the hub's node identity, read from the mount.
user=$(k auth whoami -o jsonpath='{.status.userInfo.username}') || fail "kubectl auth whoami: $user"
[ "$user" = "system:node:$node" ] || fail "kubectl auth whoami through the hub: $user"
ok "kubectl auth whoami through the image's hub: $user"
[ -d "$rootfs/etc/kubernetes/cache" ] || fail "the hub wrote no cache under /etc/kubernetes/cache"
ok "the hub's cache is in the image's /etc/kubernetes/cache"
