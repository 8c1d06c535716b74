#!/usr/bin/env bash
# Configures and builds one CMake preset (default: "default"). The release preset (benchmarks,
# package) is built profile-guided (scripts/pgo_build.sh: instrument, train, rebuild); with
# YURTHUB_PGO=off it is built without a profile. Usage: build.sh [preset]
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-default}
jobs=${YURTHUB_BUILD_JOBS:-$(nproc)}
if [ "$preset" = release ] && [ "${YURTHUB_PGO:-on}" != off ]; then
  bash scripts/pgo_build.sh build/release
else
  cmake --preset "$preset" -DYURTHUB_PGO= >/dev/null
fi
cmake --build --preset "$preset" -j "$jobs"
