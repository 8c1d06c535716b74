#!/usr/bin/env bash
# The first steps of the profile-guided release build (CMakeLists.txt, YURTHUB_PGO): configures
# BUILD_DIR from the release preset with the product instrumented, builds the hub and the fake
# apiserver, runs the training (scripts/pgo_train.sh, profile in BUILD_DIR/pgo), then configures
# BUILD_DIR again to compile the product with that profile, and with CMAKE ARGS. The caller builds
# what it needs next: scripts/build.sh release everything, cmd/packaging/build_image.sh and the
# Dockerfile the package. The training needs the fake apiserver, so GoogleTest must be installed
# for the first configure, whatever the last one says.
# Usage: pgo_build.sh BUILD_DIR [CMAKE ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath -m "$1")
shift
jobs=${YURTHUB_BUILD_JOBS:-$(nproc)}
cmake --preset release -B "$build" "$@" -DYURTHUB_BUILD_TESTS=ON -DYURTHUB_PGO=generate >/dev/null
rm -rf "$build/pgo"  # counts would add up over runs
cmake --build "$build" -j "$jobs" --target yurthub fake_apiserver
bash scripts/pgo_train.sh "$build"
compgen -G "$build/pgo/*.gcda" >/dev/null || {
  echo "pgo_build: the training wrote no profile to $build/pgo" >&2
  exit 1
}
cmake --preset release -B "$build" -DYURTHUB_BUILD_TESTS=ON "$@" -DYURTHUB_PGO=use >/dev/null
