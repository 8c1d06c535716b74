#!/usr/bin/env bash
# The README's second command: installs what is missing, builds, and runs the whole test suite
# (unit tests and integration tests with the real yurthub, the fake apiserver and kubectl) in the
# AddressSanitizer + UndefinedBehaviorSanitizer build (the asan preset): the same tests as the
# default build, with every memory error and undefined behaviour a failure. One build instead of
# two keeps CI (.ci/run) within its hour on a two-core machine; `ctest --preset default` after
# `scripts/build.sh` runs them unsanitized.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh asan
ctest --preset asan
