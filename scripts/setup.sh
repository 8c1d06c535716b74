#!/usr/bin/env bash
# Installs what building and testing yurthub needs on Debian 12, if missing: the toolchain, the
# Debian -dev packages the project depends on, clang and its libFuzzer runtime (scripts/fuzz.sh),
# clang-format and clang-tidy (scripts/check_format.sh, check_tidy.sh), kubectl (used by the demo and the tests), dpkg-dev and file, which CPack's DEB generator runs
# (dpkg-shlibdeps) to compute the package's Depends (test/packaging), and curl, the client of the
# profile-guided build's training run (scripts/pgo_train.sh) and of the benchmarks, and libfaketime
# (package faketime), which moves the hub's wall clock forward in the offline-window integration
# test (test/integration/offline_window_test.cc) without a test hook in the binary.
# `setup.sh image` adds what cmd/packaging/build_image.sh needs to build the container image without
# Docker: debootstrap, umoci and jq. `setup.sh vm` adds what test/net/dummy_interface_vm_test.sh
# needs to boot a Debian kernel: debootstrap, qemu-system-x86 and cpio.
# Idempotent; runs apt only when something is missing. Needs root (or sudo).
set -euo pipefail

packages=(cmake g++ ninja-build ccache pkg-config openssl curl
          libboost1.81-dev libssl-dev zlib1g-dev rapidjson-dev liblmdb-dev libyaml-cpp-dev
          libgtest-dev libgmock-dev clang clang-format clang-tidy libclang-rt-14-dev dpkg-dev file
          faketime)
case ${1:-} in
  '') ;;
  image) packages+=(debootstrap umoci jq) ;;
  vm) packages+=(debootstrap qemu-system-x86 cpio) ;;
  *) echo "usage: setup.sh [image|vm]" >&2; exit 2 ;;
esac

sudo_if_needed() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@";
  else echo "setup: need root to install: $*" >&2; exit 1; fi
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
need_kubectl=0
command -v kubectl >/dev/null || need_kubectl=1

if [ ${#missing[@]} -gt 0 ] || [ $need_kubectl -eq 1 ]; then
  export DEBIAN_FRONTEND=noninteractive
  sudo_if_needed apt-get update -q
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    sudo_if_needed apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
  if [ $need_kubectl -eq 1 ]; then
    # kubectl is not in Debian's main archive; use a configured Kubernetes or Cloud SDK repository.
    sudo_if_needed apt-get install -y -q kubectl || {
      echo "setup: kubectl is needed (https://kubernetes.io/docs/tasks/tools/) and no apt source provides it" >&2
      exit 1
    }
  fi
fi
