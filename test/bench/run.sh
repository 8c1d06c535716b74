#!/usr/bin/env bash
# The benchmark runner (issue 6; what it covers so far is listed in docs/benchmarks.md): builds the
# release preset, then measures, in one run on this machine, a small GET straight to the upstream
# (the bundled fake apiserver, HTTPS), through nginx as a plain reverse proxy, through the hub for a
# pass-through component and through the hub for a cached component; and the hub's idle RSS.
# Each figure is the median of BENCH_RUNS runs of BENCH_SECONDS with wrk; ratios are against the
# baselines measured in the same run. Prints a markdown table (also left in the work directory).
# Usage: test/bench/run.sh   (as root on Debian 12; installs wrk and nginx-light if missing)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
bash scripts/setup.sh
missing=()
for p in wrk nginx-light; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
bash scripts/build.sh release >/dev/null

bin=$root/build/release
work=$(mktemp -d /tmp/yurthub-bench.XXXXXX)
duration=${BENCH_SECONDS:-5}
runs=${BENCH_RUNS:-3}
hub_port=${BENCH_HUB_PORT:-20361}
admin_port=${BENCH_ADMIN_PORT:-20367}
nginx_port=${BENCH_NGINX_PORT:-20380}
target=/api/v1/namespaces/default/pods/web-0
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

wait_log() {  # wait_log FILE REGEX: prints the first capture group once the line appears
  local text
  for _ in $(seq 1 200); do
    text=$(cat "$1" 2>/dev/null || true)
    if [[ $text =~ $2 ]]; then echo "${BASH_REMATCH[1]}"; return 0; fi
    sleep 0.05
  done
  echo "bench: timed out waiting for '$2' in $1" >&2; cat "$1" >&2; exit 1
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

bash scripts/gen-certs.sh "$work/pki" edge-node-1 >/dev/null
"$bin/test/fake_apiserver/fake_apiserver" --cert="$work/pki/apiserver.crt" \
  --key="$work/pki/apiserver.key" --client-ca="$work/pki/ca.crt" --token-file="$work/pki/tokens.csv" \
  --port=0 --seed="$root/test/testdata/fake_apiserver/demo-objects.json" >"$work/apiserver.log" 2>&1 &
pids+=("$!")
api_port=$(wait_log "$work/apiserver.log" 'listening on 127\.0\.0\.1:([0-9]+)')

# Same number of worker threads / processes for the hub and nginx: one.
"$bin/cmd/yurthub" --server-addr="https://127.0.0.1:$api_port" --node-name=edge-node-1 \
  --kubeconfig="$work/pki/hub.kubeconfig" --proxy-port="$hub_port" --serve-port="$admin_port" \
  --disk-cache-path="$work/cache" --worker-threads=1 --v=0 >"$work/hub.log" 2>&1 &
hub_pid=$!; pids+=("$hub_pid")
wait_log "$work/hub.log" 'apiserver (https://[^ ]+) is healthy' >/dev/null
sleep 5
hub_idle_rss=$(rss_kb "$hub_pid")

mkdir -p "$work/nginx"
cat >"$work/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  upstream apiserver { server 127.0.0.1:$api_port; keepalive 64; }
  server {
    listen 127.0.0.1:$nginx_port;
    location / {
      proxy_pass https://apiserver;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_ssl_certificate $work/pki/hub-client.crt;
      proxy_ssl_certificate_key $work/pki/hub-client.key;
      proxy_ssl_trusted_certificate $work/pki/ca.crt;
      proxy_ssl_verify on;
      proxy_ssl_name localhost;  # nginx matches DNS names, not IP SANs
      proxy_ssl_session_reuse off;  # resumed sessions fail now and then against the fake (alert 80)
    }
  }
}
NGINX
nginx -c "$work/nginx.conf" -p "$work/nginx" >"$work/nginx/stdout.log" 2>&1 &
pids+=("$!")
for _ in $(seq 1 100); do [ -s "$work/nginx/nginx.pid" ] && break; sleep 0.05; done

# wrk_once NAME CONNECTIONS URL [HEADER...]: one run; prints "p50_us p99_us requests_per_s".
# A run with any error or non-2xx answer stops the benchmark: its figures would mean nothing.
wrk_once() {
  local name=$1 url=$3 args=(-t1 "-c$2" "-d${duration}s" --latency) out
  shift 3
  for h in "$@"; do args+=(-H "$h"); done
  out=$(wrk "${args[@]}" "$url")
  if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
    echo "bench: $name got errors:" >&2; echo "$out" >&2; exit 1
  fi
  awk '
    function us(v) { if (v ~ /us$/) return v + 0; if (v ~ /ms$/) return v * 1000; if (v ~ /s$/) return v * 1000000; return v }
    $1 == "50%" { p50 = us($2) } $1 == "99%" { p99 = us($2) } $1 == "Requests/sec:" { rps = $2 }
    END { printf "%.0f %.0f %.0f\n", p50, p99, rps }' <<<"$out"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# measure NAME CONNECTIONS URL [HEADER...]: the median of each figure over $runs runs.
declare -A p50 p99 rps
measure() {
  local name=$1 conns=$2; shift 2
  # Warm-up (connections, TLS sessions, caches), not checked: nginx's very first upstream
  # handshake with the fake apiserver may fail once.
  local url=$1 warm=(-t1 "-c$conns" -d1s); shift
  for h in "$@"; do warm+=(-H "$h"); done
  wrk "${warm[@]}" "$url" >/dev/null
  set -- "$url" "$@"
  local out; out=$(for _ in $(seq 1 "$runs"); do wrk_once "$name" "$conns" "$@"; done)
  p50[$name/$conns]=$(awk '{print $1}' <<<"$out" | median)
  p99[$name/$conns]=$(awk '{print $2}' <<<"$out" | median)
  rps[$name/$conns]=$(awk '{print $3}' <<<"$out" | median)
}

token="Authorization: Bearer admin-token-0123456789"
for c in 1 32; do
  measure direct "$c" "https://127.0.0.1:$api_port$target" "$token"
  measure nginx "$c" "http://127.0.0.1:$nginx_port$target"
  measure hub "$c" "http://127.0.0.1:$hub_port$target" "User-Agent: bench/1.0"
  measure hub-cached "$c" "http://127.0.0.1:$hub_port$target" "User-Agent: kubelet/v1.32.4"
done
hub_busy_rss=$(rss_kb "$hub_pid")
nginx_rss=0
for p in $(pgrep -f "nginx.*$work/nginx.conf" || true); do nginx_rss=$((nginx_rss + $(rss_kb "$p"))); done

{
  echo "# yurthub benchmarks, $(date -u +%FT%TZ), $(nproc) cores, ${runs} runs x ${duration}s, medians"
  echo
  echo "Small GET of one pod ($target) on each path; added = its p50 minus direct's p50."
  echo
  echo "| path | conns | p50 µs | p99 µs | req/s | added p50 µs | added vs nginx's | req/s vs nginx |"
  echo "|---|---|---|---|---|---|---|---|"
  for c in 1 32; do
    for name in direct nginx hub hub-cached; do
      k=$name/$c
      added=$(( ${p50[$k]} - ${p50[direct/$c]} ))
      nginx_added=$(( ${p50[nginx/$c]} - ${p50[direct/$c]} ))
      vs_nginx=$(awk -v a="$added" -v n="$nginx_added" 'BEGIN { if (n <= 0) print "-"; else printf "%.2f", a / n }')
      rps_ratio=$(awk -v a="${rps[$k]}" -v n="${rps[nginx/$c]}" 'BEGIN { printf "%.2f", a / n }')
      [ "$name" = direct ] && { added="-"; vs_nginx="-"; }
      echo "| $name | $c | ${p50[$k]} | ${p99[$k]} | ${rps[$k]} | $added | $vs_nginx | $rps_ratio |"
    done
  done
  echo
  echo "| memory | KiB |"
  echo "|---|---|"
  echo "| hub RSS, idle (5 s after start) | $hub_idle_rss |"
  echo "| hub RSS, after the runs above | $hub_busy_rss |"
  echo "| nginx RSS (master + worker), after the runs | $nginx_rss |"
} | tee "$work/results.md"
echo
echo "bench: logs and results in $work"
