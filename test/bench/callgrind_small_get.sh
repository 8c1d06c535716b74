#!/usr/bin/env bash
# Instructions per proxied small GET, counted by callgrind (docs/benchmarks.md): the figure that
# does not move with this shared machine's noise. Starts the fake apiserver and one hub worker
# under callgrind, warms up with 200 requests, then counts the user-space instructions of the
# hub for N requests at one connection (wrk), and prints instructions per request for the
# pass-through path (User-Agent bench/1.0) and the cached one (kubelet). nginx, when installed,
# is counted the same way as the plain-proxy baseline.
# Usage: test/bench/callgrind_small_get.sh [YURTHUB_BINARY] [FAKE_APISERVER_BINARY]
#   (defaults: the release build; test/bench/run.sh builds it). Needs valgrind and wrk.
# CALLGRIND_CACHE_SIM=1 adds callgrind's cache model and prints, per request, its first-level
# instruction-cache misses, data misses (read + write) and mispredicted branches: what instruction
# counts at par leave unexplained (cycles per instruction).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
source test/bench/bench_lib.sh
hub_bin=${1:-$root/build/release/cmd/yurthub}
api_bin=${2:-$root/build/release/test/fake_apiserver/fake_apiserver}
seconds=${CALLGRIND_SECONDS:-8}
model=()
[ -z "${CALLGRIND_CACHE_SIM:-}" ] || model=(--cache-sim=yes --branch-sim=yes)
work=$(mktemp -d /tmp/yurthub-callgrind.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
target=/api/v1/namespaces/default/pods/web-0

requests() { awk '/ requests in / { print $1 }'; }
# total_ir OUTFILE: the summed Ir of a callgrind dump.
total_ir() { awk '/^summary:|^totals:/ { print $2; exit }' "$1"; }
# model_per_request OUTFILE N: the cache model's misses per request, by the dump's event names.
model_per_request() {
  awk -v n="$2" '/^events:/ { for (i = 2; i <= NF; i++) name[i] = $i }
    /^summary:|^totals:/ { for (i = 2; i <= NF; i++) v[name[i]] = $i; exit }
    END { printf ", %d I1 misses, %d D1 misses, %d mispredicted branches", v["I1mr"] / n,
          (v["D1mr"] + v["D1mw"]) / n, (v["Bcm"] + v["Bim"]) / n }' "$1"
}

bash scripts/gen-certs.sh "$work/pki" edge-node-1 >/dev/null
"$api_bin" --cert="$work/pki/apiserver.crt" --key="$work/pki/apiserver.key" \
  --client-ca="$work/pki/ca.crt" --token-file="$work/pki/tokens.csv" --port=0 \
  --seed="$root/test/testdata/fake_apiserver/demo-objects.json" >"$work/apiserver.log" 2>&1 &
pids+=("$!")
api_port=$(wait_log "$work/apiserver.log" 'listening on 127\.0\.0\.1:([0-9]+)' 60)

# measure NAME URL HEADER COMMAND...: runs COMMAND (a proxy) under callgrind with instrumentation
# off, warms it up, counts N requests, prints "NAME instructions_per_request".
measure() {
  local name=$1 url=$2 header=$3; shift 3
  valgrind --tool=callgrind --instr-atstart=no "${model[@]}" --callgrind-out-file="$work/$name.%p.out" \
    "$@" >"$work/$name.log" 2>&1 &
  local pid=$!
  pids+=("$pid")
  for _ in $(seq 1 600); do curl -s -o /dev/null -H "$header" "$url" && break; sleep 0.2; done
  sleep 2  # the hub's first health probes
  wrk -t1 -c1 -d3s -H "$header" "$url" >/dev/null  # warm-up, with instrumentation off
  callgrind_control -i on "$pid" >/dev/null 2>&1
  callgrind_control -z "$pid" >/dev/null 2>&1
  local n
  n=$(wrk -t1 -c1 "-d${seconds}s" -H "$header" "$url" | requests)
  callgrind_control -d "$pid" >/dev/null 2>&1
  sleep 1
  local dump ir
  dump=$(ls -t "$work/$name".*.out.* 2>/dev/null | head -1)
  ir=$(total_ir "$dump")
  kill "$pid" 2>/dev/null || true
  local extra=""
  [ ${#model[@]} -eq 0 ] || extra=$(model_per_request "$dump" "$n")
  echo "$name $(( ir / n )) instructions per request$extra ($n requests)"
}

port=$(( 21000 + RANDOM % 2000 ))
hub=("$hub_bin" --server-addr="https://127.0.0.1:$api_port" --node-name=edge-node-1
     --kubeconfig="$work/pki/hub.kubeconfig" --proxy-port="$port" --serve-port=$(( port + 6 ))
     --disk-cache-path="$work/cache" --worker-threads=1 --v=0 --enable-dummy-if=false)
measure hub "http://127.0.0.1:$port$target" "User-Agent: bench/1.0" "${hub[@]}"
sleep 1
measure hub-cached "http://127.0.0.1:$port$target" "User-Agent: kubelet/v1.32.4" "${hub[@]}"
if command -v nginx >/dev/null; then
  write_nginx_conf "$work" "$api_port" "$(( port + 1 ))" "master_process off;"
  measure nginx "http://127.0.0.1:$(( port + 1 ))$target" "User-Agent: bench/1.0" \
    nginx -c "$work/nginx.conf" -p "$work/nginx"
fi
