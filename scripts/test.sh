#!/usr/bin/env bash
# The README's second command: installs what is missing, builds, and runs the whole test suite
# (unit tests and integration tests with the real yurthub, the fake apiserver and kubectl).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh default
ctest --preset default
