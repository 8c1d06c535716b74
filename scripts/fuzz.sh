#!/usr/bin/env bash
# Builds the fuzz preset (clang, libFuzzer, ASan + UBSan, assertions on) and runs every libFuzzer
# target of test/fuzz for SECONDS each (default 30), one after another, seeded with
# test/fuzz/seed_corpus.sh. What a target finds is kept: its corpus grows in
# build/fuzz/corpus/<target> across runs, and a crash is saved in build/fuzz/artifacts/ (replay it
# with `build/fuzz/test/fuzz/<target> <file>`) and fails the script once every target has run.
# Usage: fuzz.sh [seconds-per-target] [target...]   (targets are file names without .cc)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
[ $# -gt 0 ] && shift
jobs=${YURTHUB_BUILD_JOBS:-$(nproc)}
bash scripts/setup.sh  # clang and libclang-rt-14-dev (libFuzzer), if missing
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$jobs" --target fuzz_targets

dir=build/fuzz
bash test/fuzz/seed_corpus.sh "$dir/seeds" >/dev/null
mkdir -p "$dir/corpus" "$dir/artifacts" "$dir/logs"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in test/fuzz/*_fuzz.cc; do targets+=("$(basename "$f" .cc)"); done
fi

# Targets that read JSON get test/fuzz/json.dict; others may have test/fuzz/<target>.dict.
json_targets=" service_account_keys_fuzz json_parse_fuzz list_framer_fuzz watch_framer_fuzz json_patch_fuzz strategic_merge_fuzz
  offline_apply_fuzz journal_entry_fuzz ota_pod_fuzz autonomy_condition_fuzz admission_review_fuzz object_meta_fuzz "

failed=()
for t in "${targets[@]}"; do
  mkdir -p "$dir/corpus/$t"
  log="$dir/logs/$t.log"
  dict=()
  if [ -f "test/fuzz/$t.dict" ]; then dict=(-dict="test/fuzz/$t.dict");
  elif [[ $json_targets == *" $t "* ]]; then dict=(-dict=test/fuzz/json.dict); fi
  # -timeout: one input running this long is a finding (a hang), well above any real input.
  if UBSAN_OPTIONS=print_stacktrace=1 "$dir/test/fuzz/$t" -max_total_time="$seconds" -timeout=30 \
       -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t-" "${dict[@]}" \
       "$dir/corpus/$t" "$dir/seeds/$t" > "$log" 2>&1; then
    runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
    echo "fuzz: $t: no finding in ${seconds} s ($runs runs, corpus $(ls "$dir/corpus/$t" | wc -l))"
  else
    echo "fuzz: $t: FINDING, see $log and $dir/artifacts/"
    grep -E "ERROR|fuzz check failed|SUMMARY|Test unit written" "$log" | head -5 || true
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]}" >&2
  exit 1
fi
