#!/usr/bin/env bash
# clang-tidy with the checks in .clang-tidy (bugprone, performance, modernize-use-override), every
# finding an error, over every layer: base/, kube/, net/, hub/ (with hub/certificate/), cache/,
# filters/, admission/, pool/ and cmd/. About 400 CPU-seconds, so some 3.5 minutes on two cores
# (the Asio and Beast headers make a hub/ file take 5 to 20 s). `check_tidy.sh pure` does only base/ and
# kube/ (the parsers of client and network input; under a minute). Reads the compile commands of
# build/default (YURTHUB_TIDY_BUILD), so run it after a build. Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
db=${YURTHUB_TIDY_BUILD:-build/default}
[ -f "$db/compile_commands.json" ] ||
  { echo "check_tidy: no $db/compile_commands.json; build first (scripts/build.sh)" >&2; exit 1; }
case ${1:-all} in
  pure) files=(base/*.cc kube/*.cc) ;;
  all) files=(base/*.cc kube/*.cc net/*.cc hub/*.cc hub/certificate/*.cc cache/*.cc filters/*.cc
              admission/*.cc pool/*.cc cmd/*.cc) ;;
  *) echo "usage: check_tidy.sh [pure|all]" >&2; exit 2 ;;
esac
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The gcc build's flags lack clang's -Wno-ambiguous-reversed-operator (CMakeLists.txt says why).
if printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc)" -n 1 clang-tidy -p "$db" --quiet \
    --extra-arg=-Wno-ambiguous-reversed-operator >"$log" 2>&1; then
  echo "tidy: ${#files[@]} files clean"
else
  grep -E -A3 '(warning|error):' "$log" >&2 || cat "$log" >&2
  echo "tidy: findings above" >&2
  exit 1
fi
