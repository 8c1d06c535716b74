#!/usr/bin/env bash
# Builds the yurthub container image without Docker, from Debian 12 packages only: the same two
# stages as cmd/packaging/Dockerfile, with the same result. Stage 1 builds the .deb in BUILD_DIR
# (default build/image/release, its own, so that the benchmarks' build/release keeps its tests;
# reused when it exists); stage 2 installs it with apt, in a chroot, into
# a debootstrap minbase slimmed as debian:12-slim is (cached under build/image/cache); umoci then
# writes build/image/yurthub-<version>.oci.tar, entrypoint /usr/bin/yurthub, which `docker load`,
# `podman load` and `ctr images import` read. Change one, change the other.
# Run by hand as root (docs/operations.md "Static pod and image") and by
# test/packaging/image_test.sh. Installs debootstrap, umoci and jq if missing (scripts/setup.sh
# image). Its last line of output is the archive's path.
#
# Usage: build_image.sh [BUILD_DIR]
# Environment: YURTHUB_IMAGE_NAME (default registry.example.com/yurthub:<version>, as the static
# pod's manifest), YURTHUB_IMAGE_MIRROR and YURTHUB_IMAGE_SECURITY_MIRROR (default: the bookworm
# sources apt uses here, else deb.debian.org), YURTHUB_BUILD_JOBS.
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$(pwd)
build=$(realpath -m "${1:-build/image/release}")
out=$src/build/image
jobs=${YURTHUB_BUILD_JOBS:-$(nproc)}
suite=bookworm
arch=$(dpkg --print-architecture)
start=$(date +%s)
step() { echo "build_image: $* ($(($(date +%s) - start)) s)"; }

[ "$(id -u)" -eq 0 ] || {
  echo "build_image: needs root (debootstrap, chroot)" >&2
  exit 1
}
bash scripts/setup.sh image

source "$src/scripts/apt_mirror.sh"  # apt_mirror
main_mirror=${YURTHUB_IMAGE_MIRROR:-$(apt_mirror $suite)}
main_mirror=${main_mirror:-http://deb.debian.org/debian}
security_mirror=${YURTHUB_IMAGE_SECURITY_MIRROR:-$(apt_mirror $suite-security)}
security_mirror=${security_mirror:-http://deb.debian.org/debian-security}

# --- stage 1: the .deb (Dockerfile: FROM debian:12 AS build) ---------------------------------
# Profile-guided, as the benchmarks measure it (scripts/pgo_build.sh: instrument, train, configure
# with the profile); the training needs the fake apiserver, so GoogleTest is installed here too.
step "stage 1: the profile-guided build in $build"
bash scripts/pgo_build.sh "$build" -DYURTHUB_BUILD_TESTS=OFF
grep -qx 'CMAKE_BUILD_TYPE:STRING=Release' "$build/CMakeCache.txt" ||
  { echo "build_image: $build is not a Release build" >&2; exit 1; }
rm -f "$build"/yurthub_*.deb
cmake --build "$build" -j "$jobs" --target package
deb=$(echo "$build"/yurthub_*_"$arch".deb)
[ -f "$deb" ] || { echo "build_image: no .deb in $build" >&2; exit 1; }
version=$(dpkg-deb -f "$deb" Version)
name=${YURTHUB_IMAGE_NAME:-registry.example.com/yurthub:$version}
step "stage 1: $(basename "$deb")"

# --- stage 2: the runtime root filesystem (Dockerfile: FROM debian:12-slim) ------------------
mkdir -p "$out/cache"
base=$out/cache/$suite-minbase-$arch
stamp="$suite $arch $main_mirror $security_mirror"
if [ "$(cat "$base/.yurthub-base" 2>/dev/null)" != "$stamp" ]; then
  step "stage 2: debootstrap $suite from $main_mirror (cached in $base)"
  rm -rf "$base" "$base.tmp"
  debootstrap --variant=minbase --arch="$arch" "$suite" "$base.tmp" "$main_mirror" \
    >"$out/debootstrap.log" 2>&1 || { tail -20 "$out/debootstrap.log" >&2; exit 1; }
  # What debuerreotype does to make debian:12-slim: dpkg leaves out docs, man pages and locales
  # from now on, and what debootstrap installed of them goes.
  cat >"$base.tmp/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/man/*
EOF
  find "$base.tmp/usr/share/doc" -mindepth 1 -not -type d -not -name copyright -delete
  find "$base.tmp/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$base.tmp"/usr/share/{groff,info,linda,lintian,man}/*
  find "$base.tmp/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias \
    -exec rm -rf {} +
  echo 'Acquire::Languages "none";' >"$base.tmp/etc/apt/apt.conf.d/docker-no-languages"
  # The sources debian:12's image has, in place of debootstrap's one line.
  rm -f "$base.tmp/etc/apt/sources.list"
  cat >"$base.tmp/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $main_mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security_mirror
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -rf "$base.tmp"/var/cache/apt/archives/*.deb "$base.tmp"/var/lib/apt/lists/*
  echo "$stamp" >"$base.tmp/.yurthub-base"
  mv "$base.tmp" "$base"
else
  step "stage 2: reusing the $suite minbase in $base"
fi

rootfs=$out/rootfs
rm -rf "$rootfs"
cp -a "$base" "$rootfs"
rm "$rootfs/.yurthub-base"
cp "$deb" "$rootfs/tmp/yurthub.deb"
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
# in_root CMD...: CMD chrooted in the new root with /proc mounted, in a mount namespace of its own
# so that no mount outlives it (an rm -rf of the root can never reach the host's /proc).
in_root() {
  unshare --mount --propagation private -- \
    sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$rootfs" \
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"
}
# The postinst finds no running systemd here and does nothing.
in_root sh -c 'apt-get update && apt-get install -y --no-install-recommends /tmp/yurthub.deb \
  && apt-get clean && rm -rf /var/lib/apt/lists/* /tmp/yurthub.deb' >"$out/apt.log" 2>&1 ||
  { tail -20 "$out/apt.log" >&2; exit 1; }
[ "$(in_root /usr/bin/yurthub --version)" = "yurthub $version" ] ||
  { echo "build_image: yurthub --version fails in the new root" >&2; exit 1; }
# What a runtime provides, or what belongs to the build host: not part of the image.
rm -f "$rootfs/etc/resolv.conf" "$rootfs/etc/hostname"
find "$rootfs/dev" -mindepth 1 -delete
rm -rf "$rootfs"/var/log/apt/* "$rootfs"/var/log/dpkg.log "$rootfs"/var/cache/debconf/*-old
step "stage 2: $(du -sh --apparent-size "$rootfs" | cut -f1) root filesystem," \
  "$(grep -c '^Unpacking' "$out/apt.log") packages added by apt"

# --- the OCI image archive ------------------------------------------------------------------
layout=$out/oci
rm -rf "$layout"
umoci init --layout "$layout"
umoci new --image "$layout:$version"
umoci insert --image "$layout:$version" \
  --history.created_by "build_image.sh: debootstrap minbase + apt install yurthub.deb" "$rootfs" /
# debian:12-slim's PATH; ENTRYPOINT alone, as in the Dockerfile, where it clears the base's CMD.
umoci config --image "$layout:$version" --os linux --architecture "$arch" \
  --config.entrypoint /usr/bin/yurthub \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
umoci gc --layout "$layout"
# The names a loader gives the image (buildx's type=docker exporter writes the same): containerd
# and Docker 25+ read index.json's annotations, older Docker reads manifest.json.
jq --arg name "$name" --arg tag "$version" \
  '.manifests |= map(select(.annotations["org.opencontainers.image.ref.name"] == $tag)
     | .annotations["io.containerd.image.name"] = $name)' \
  "$layout/index.json" >"$layout/index.json.new"
mv "$layout/index.json.new" "$layout/index.json"
manifest=$(jq -r '.manifests[0].digest' "$layout/index.json")
jq --arg name "$name" '[{Config: ("blobs/sha256/" + (.config.digest | ltrimstr("sha256:"))),
    RepoTags: [$name], Layers: [.layers[].digest | "blobs/sha256/" + ltrimstr("sha256:")]}]' \
  "$layout/blobs/sha256/${manifest#sha256:}" >"$layout/manifest.json"
archive=$out/yurthub-$version.oci.tar
tar -C "$layout" --owner=0 --group=0 --numeric-owner -cf "$archive.tmp" \
  oci-layout index.json manifest.json blobs
mv "$archive.tmp" "$archive"
step "image $name: $(du -h --apparent-size "$archive" | cut -f1) archive"
echo "$archive"
