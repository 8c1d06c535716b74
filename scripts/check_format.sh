#!/usr/bin/env bash
# Fails if any C++ file differs from .clang-format (clang-format 14, Debian 12's). Run by .ci/run;
# `git ls-files '*.cc' '*.h' | xargs clang-format -i` fixes what it reports.
set -euo pipefail
cd "$(dirname "$0")/.."
if git ls-files -z '*.cc' '*.h' | xargs -0 clang-format --dry-run --Werror 2>/tmp/clang-format.$$; then
  echo "format: every C++ file matches .clang-format"
  rm -f /tmp/clang-format.$$
else
  grep -E '^[^ ].*: error:' /tmp/clang-format.$$ | cut -d: -f1 | sort -u | sed 's/^/format: not formatted: /'
  rm -f /tmp/clang-format.$$
  exit 1
fi
