#!/usr/bin/env bash
# The benchmark runner (issue 6; method and results in docs/benchmarks.md). Builds the release
# preset (profile-guided, as the package is: scripts/build.sh), then measures in one run on this
# machine, each figure next to a baseline measured in the same run:
#   1. a small GET: straight to the upstream (the bundled fake apiserver, HTTPS), through nginx as
#      a plain reverse proxy, through the hub for a pass-through component and for a cached one;
#      with every process on one CPU (the verdict), then where the scheduler puts them;
#   2. a 20 MB pod list: time to last byte on the same paths, and the hub's peak RSS;
#   3. servicetopology and the cache in process (test/bench/filter_bench.cc, cache_bench.cc);
#   4. the hub's RSS idle and with 10k cached objects, and the CPU it spends on a burst of 10,000
#      EndpointSlice watch events (filtered and cached for kube-proxy);
#   5. pool sharing (issue 32): test/bench/pool_sharing.sh, run at the end.
# Each figure is a median of several runs. Prints markdown tables (also left in the work dir).
# Usage: test/bench/run.sh   (as root on Debian 12; installs wrk and nginx-light if missing)
# Env: BENCH_SECONDS, BENCH_RUNS (wrk), BENCH_LIST_RUNS, BENCH_*_PORT; BENCH_SKIP_BUILD=1 with
# BENCH_BUILD_DIR to measure a build at hand (its yurthub, fake_apiserver and benches built).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
source test/bench/bench_lib.sh
bash scripts/setup.sh
missing=()
for p in wrk nginx-light; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
[ -n "${BENCH_SKIP_BUILD:-}" ] || bash scripts/build.sh release >/dev/null

bin=${BENCH_BUILD_DIR:-$root/build/release}
work=$(mktemp -d /tmp/yurthub-bench.XXXXXX)
duration=${BENCH_SECONDS:-3}
runs=${BENCH_RUNS:-9}
hub_port=${BENCH_HUB_PORT:-20361}
admin_port=${BENCH_ADMIN_PORT:-20367}
nginx_port=${BENCH_NGINX_PORT:-20380}
target=/api/v1/namespaces/default/pods/web-0
list_target=/api/v1/namespaces/bulk/pods
list_runs=${BENCH_LIST_RUNS:-15}
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

status_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }  # status_kb PID VmRSS
rss_kb() { status_kb "$1" VmRSS; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # user + system, in clock ticks

bash scripts/gen-certs.sh "$work/pki" edge-node-1 >/dev/null
"$bin/test/fake_apiserver/fake_apiserver" --cert="$work/pki/apiserver.crt" \
  --key="$work/pki/apiserver.key" --client-ca="$work/pki/ca.crt" --token-file="$work/pki/tokens.csv" \
  --port=0 --seed="$root/test/testdata/fake_apiserver/demo-objects.json" \
  --generate-pods=10000 --generate-pod-bytes=2000 --generate-node=edge-node-1 >"$work/apiserver.log" 2>&1 &
pids+=("$!")
api_port=$(wait_log "$work/apiserver.log" 'listening on 127\.0\.0\.1:([0-9]+)')

# Same number of worker threads / processes for the hub and nginx: one.
"$bin/cmd/yurthub" --server-addr="https://127.0.0.1:$api_port" --node-name=edge-node-1 \
  --kubeconfig="$work/pki/hub.kubeconfig" --proxy-port="$hub_port" --serve-port="$admin_port" \
  --disk-cache-path="$work/cache" --worker-threads=1 --v=0 --enable-dummy-if=false \
  >"$work/hub.log" 2>&1 &
hub_pid=$!; pids+=("$hub_pid")
wait_log "$work/hub.log" 'apiserver (https://[^ ]+) is healthy' >/dev/null
sleep 5
hub_idle_rss=$(rss_kb "$hub_pid")

write_nginx_conf "$work" "$api_port" "$nginx_port"
nginx -c "$work/nginx.conf" -p "$work/nginx" >"$work/nginx/stdout.log" 2>&1 &
pids+=("$!")
for _ in $(seq 1 100); do [ -s "$work/nginx/nginx.pid" ] && break; sleep 0.05; done

# wrk_once NAME CONNECTIONS URL HEADER [PREFIX]: one run (PREFIX: taskset for the one-cpu
# layout); prints "p50_us p99_us requests_per_s requests" (wrk's percentiles are whole
# microseconds).
# A run with any error or non-2xx answer stops the benchmark: its figures would mean nothing.
wrk_once() {
  local name=$1 out
  out=$(${5:-} wrk -t1 "-c$2" "-d${duration}s" --latency -H "$4" "$3")
  if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
    echo "bench: $name got errors:" >&2; echo "$out" >&2; exit 1
  fi
  awk '
    function us(v) { if (v ~ /us$/) return v + 0; if (v ~ /ms$/) return v * 1000; if (v ~ /s$/) return v * 1000000; return v }
    $1 == "50%" { p50 = us($2) } $1 == "99%" { p99 = us($2) } $1 == "Requests/sec:" { rps = $2 }
    / requests in / { n = $1 }
    END { printf "%.0f %.0f %.0f %d\n", p50, p99, rps, n }' <<<"$out"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# The paths, each with its URL, a header, and the process whose CPU it costs (none for direct).
token="Authorization: Bearer admin-token-0123456789"
nginx_worker=$(pgrep -f "nginx: worker process" -P "$(cat "$work/nginx/nginx.pid")" | head -1)
paths=(direct nginx hub hub-cached)
declare -A url=([direct]="https://127.0.0.1:$api_port$target" [nginx]="http://127.0.0.1:$nginx_port$target"
                [hub]="http://127.0.0.1:$hub_port$target" [hub-cached]="http://127.0.0.1:$hub_port$target")
declare -A header=([direct]="$token" [nginx]="User-Agent: bench/1.0" [hub]="User-Agent: bench/1.0"
                   [hub-cached]="User-Agent: kubelet/v1.32.4")
declare -A cpu_pid=([direct]="" [nginx]="$nginx_worker" [hub]="$hub_pid" [hub-cached]="$hub_pid")
# The paths take turns, run after run, so that a slow spell of this shared machine falls on all
# of them alike; each figure is the median over $runs runs. CPU per request is the proxy's user
# + system time (clock ticks from /proc) over the requests of that run.
# Two layouts. "one-cpu": wrk, the proxy and the apiserver all on CPU 0, so a request's latency is
# the sum of their work and a path's added latency is what its proxy costs. "scheduled": where the
# kernel puts them; with three processes on two CPUs, each run then lands in one of a few
# placements whose wake-ups differ by more than the proxies do (the same build gave 0.6x to 2.6x
# nginx's added latency from one 3 s run to the next), so its medians move from one bench to the
# next. The verdict is the one-cpu layout's (docs/benchmarks.md, "Method").
declare -A p50 p99 rps cpu_us paired
api_pid=${pids[0]}
# place LAYOUT: pins (or frees) every thread of the apiserver and the proxies; prints wrk's prefix.
place() {
  local mask=$(( (1 << $(nproc)) - 1 )) p
  [ "$1" = one-cpu ] && mask=1
  for p in "$api_pid" "$hub_pid" "$nginx_worker"; do taskset -a -p "$(printf '%x' "$mask")" "$p" >/dev/null; done
  [ "$1" = one-cpu ] && echo "taskset 1"
  return 0
}
layouts=(one-cpu scheduled)
for layout in "${layouts[@]}"; do
  pin=$(place "$layout")
  for c in 1 32; do
    declare -A samples=()
    for name in "${paths[@]}"; do
      # Warm-up (connections, TLS sessions, caches), not checked: nginx's very first upstream
      # handshake with the fake apiserver may fail once.
      $pin wrk -t1 "-c$c" -d1s -H "${header[$name]}" "${url[$name]}" >/dev/null
    done
    for _ in $(seq 1 "$runs"); do
      for name in "${paths[@]}"; do
        pid=${cpu_pid[$name]}
        before=0; [ -n "$pid" ] && before=$(cpu_ticks "$pid")
        read -r a b r n < <(wrk_once "$name" "$c" "${url[$name]}" "${header[$name]}" "$pin")
        after=0; [ -n "$pid" ] && after=$(cpu_ticks "$pid")
        us=$(awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$n" 'BEGIN { printf "%.0f", t / hz * 1e6 / n }')
        samples[$name]+="$a $b $r $us"$'\n'
      done
    done
    for name in "${paths[@]}"; do
      k=$layout/$name/$c
      p50[$k]=$(awk 'NF {print $1}' <<<"${samples[$name]}" | median)
      p99[$k]=$(awk 'NF {print $2}' <<<"${samples[$name]}" | median)
      rps[$k]=$(awk 'NF {print $3}' <<<"${samples[$name]}" | median)
      cpu_us[$k]=$(awk 'NF {print $4}' <<<"${samples[$name]}" | median)
    done
    # The same ratio taken round by round: each round's paths ran within seconds of each other,
    # so a slow spell of this shared machine that spans a round cancels out of its ratio, where
    # the ratio of medians mixes rounds. Printed as the median and the range over the rounds.
    for name in nginx hub hub-cached; do
      paired[$layout/$name/$c]=$(paste -d' ' <(awk 'NF {print $1}' <<<"${samples[direct]}") \
          <(awk 'NF {print $1}' <<<"${samples[nginx]}") <(awk 'NF {print $1}' <<<"${samples[$name]}") |
        awk '$2 > $1 { print ($3 - $1) / ($2 - $1) }' | sort -g |
        awk '{ v[NR] = $1 } END { if (NR) printf "%.2f (%.2f–%.2f)", v[int((NR + 1) / 2)], v[1], v[NR]; else print "-" }')
    done
  done
done
place scheduled >/dev/null
hub_busy_rss=$(rss_kb "$hub_pid")
nginx_rss=0
for p in $(pgrep -f "nginx.*$work/nginx.conf" || true); do nginx_rss=$((nginx_rss + $(rss_kb "$p"))); done

# --- 2. A 20 MB list (10,000 pods of 2 KB in namespace bulk), time to last byte: from the request
# sent to the last byte received (curl's time_total - time_pretransfer, so the direct path's TLS
# handshake is not counted), median of $list_runs, half a second apart: a node's clients list
# after a restart or an expired watch, never back to back, and the pause lets the cache finish its
# work on the previous list (its last group commit comes up to 50 ms after the last byte), so each
# figure is one list as its client sees it, not the backlog of the one before. The paths take
# turns, round after round, as the small GETs do: five lists of one path in a row put a slow spell
# on that path alone, so a single run's verdict depended on the run (docs/benchmarks.md).
# hub-cached is kubelet (the hub parses every item and writes it to the cache while it streams),
# which leaves 10k pods cached. One pass-through round first, uncounted, gives the hub's peak RSS
# before anything is cached.
# Every list must arrive whole and as long as the apiserver's own: a list cut short is fast, and
# nginx's lists were cut short in most rounds until its temporary files were turned off
# (bench_lib.sh), which made it look twice as fast as it is.
# list_once NAME URL [CURL ARGS...]: prints "seconds bytes"; a non-200, a transfer curl reports
# as failed (a chunked body cut short) or a length other than the first list's stops the benchmark.
list_once() {
  local name=$1 address=$2 out; shift 2
  out=$(curl -sS -o /dev/null -w '%{http_code} %{time_total} %{time_pretransfer} %{size_download}' "$@" "$address") ||
    { echo "bench: list via $name failed (curl exit $?)" >&2; exit 1; }
  read -r code total pre bytes <<<"$out"
  [ "$code" = 200 ] || { echo "bench: list via $name answered $code" >&2; exit 1; }
  [ "$list_bytes" = 0 ] || [ "$bytes" = "$list_bytes" ] ||
    { echo "bench: list via $name was $bytes bytes, not $list_bytes" >&2; exit 1; }
  awk -v t="$total" -v p="$pre" -v b="$bytes" 'BEGIN { printf "%.4f %d\n", t - p, b }'
}
list_paths=(direct nginx hub hub-cached)
declare -A list_args=(
  [direct]="https://127.0.0.1:$api_port$list_target --cacert $work/pki/ca.crt -H"
  [nginx]="http://127.0.0.1:$nginx_port$list_target"
  [hub]="http://127.0.0.1:$hub_port$list_target -A bench/1.0"
  [hub-cached]="http://127.0.0.1:$hub_port$list_target -A kubelet/v1.32.4")
# list_path NAME: one list on that path (the direct path's token has spaces: passed apart).
list_path() {
  # shellcheck disable=SC2086  # the arguments are split on purpose
  if [ "$1" = direct ]; then list_once "$1" ${list_args[$1]} "$token"; else list_once "$1" ${list_args[$1]}; fi
}
declare -A list_ms list_samples
list_bytes=0
hub_before_list_hwm=$(status_kb "$hub_pid" VmHWM)
out=$(list_path direct)  # the apiserver's own length, which every other list must have
read -r _ list_bytes <<<"$out"
for name in nginx hub; do sleep 0.5; list_path "$name" >/dev/null; done
hub_pass_hwm=$(status_kb "$hub_pid" VmHWM)
for _ in $(seq 1 "$list_runs"); do
  for name in "${list_paths[@]}"; do
    sleep 0.5
    out=$(list_path "$name")  # a non-200 exits here, as set -e ends the script
    read -r seconds list_bytes <<<"$out"
    list_samples[$name]+="$seconds"$'\n'
  done
done
# The middle half of each path's lists as well as the median: on this shared machine a path's
# lists can fall into two groups (fast and slow spells), and the median alone hides which.
declare -A list_quartiles
for name in "${list_paths[@]}"; do
  sorted_ms=$(awk 'NF {print $1 * 1000}' <<<"${list_samples[$name]}" | sort -n)
  list_ms[$name]=$(median <<<"$sorted_ms")
  list_quartiles[$name]=$(awk '{ v[NR] = $1 } END { printf "%.1f–%.1f", v[int(NR / 4) + 1], v[int(3 * NR / 4) + 1] }' <<<"$sorted_ms")
done
hub_list_hwm=$(status_kb "$hub_pid" VmHWM)
sleep 2  # the cache writer's last group commit
hub_cached_rss=$(rss_kb "$hub_pid"); hub_cached_anon=$(status_kb "$hub_pid" RssAnon)
hub_cached_file=$(status_kb "$hub_pid" RssFile)

# --- 4. CPU for a burst of 10,000 EndpointSlice watch events (100 slices of 10 endpoints, their
# Services keyed by host), watched through the hub by kube-proxy (servicetopology + cache) while a
# direct watch counts the bytes the apiserver sent. The hub's CPU is read from /proc before the
# burst starts and after its last event reached the client.
kube_proxy="kube-proxy/v1.32.4 (linux/amd64) kubernetes/abc"
slices=/apis/discovery.k8s.io/v1/endpointslices
rv=$(curl -s -A "$kube_proxy" "http://127.0.0.1:$hub_port$slices" | grep -o '"resourceVersion":"[0-9]*"' | head -1 | tr -dc 0-9)
curl -sN -A "$kube_proxy" "http://127.0.0.1:$hub_port$slices?watch=true&resourceVersion=$rv&timeoutSeconds=600" \
  >"$work/slices-hub.out" & pids+=("$!")
curl -sN --cacert "$work/pki/ca.crt" -H "$token" \
  "https://127.0.0.1:$api_port$slices?watch=true&resourceVersion=$rv&timeoutSeconds=600" \
  >"$work/slices-direct.out" & pids+=("$!")
sleep 2
clk_tck=$(getconf CLK_TCK)
ticks_before=$(cpu_ticks "$hub_pid")
burst_start=$(date +%s.%N)
curl -s -o /dev/null --cacert "$work/pki/ca.crt" -H "$token" -X POST \
  "https://127.0.0.1:$api_port/_fake/churn?objects=100&events=10000&namespace=churn&resource=endpointslices&endpoints=10"
for _ in $(seq 1 1200); do
  [ "$(grep -c '"type":"\(ADDED\|MODIFIED\)"' "$work/slices-hub.out")" -ge 10000 ] && break
  sleep 0.1
done
burst_seconds=$(awk -v s="$burst_start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
ticks_after=$(cpu_ticks "$hub_pid")
hub_events=$(grep -c '"type":"\(ADDED\|MODIFIED\)"' "$work/slices-hub.out" || true)
[ "$hub_events" -ge 10000 ] || { echo "bench: the hub's watch got $hub_events of 10000 events" >&2; exit 1; }
upstream_bytes=$(stat -c %s "$work/slices-direct.out"); client_bytes=$(stat -c %s "$work/slices-hub.out")
burst_cpu=$(awk -v a="$ticks_before" -v b="$ticks_after" -v t="$clk_tck" 'BEGIN { printf "%.2f", (b - a) / t }')

# --- 3. In process: servicetopology and the cache, with the servers above stopped (the hub may
# still be committing the burst to its cache, and would compete for the two cores).
cleanup; pids=()
inprocess=$("$bin/test/bench/filter_bench"; "$bin/test/bench/cache_bench" --dir="$work/cache-bench")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) print "-"; else printf "%.2f", a / b }'; }
# added_mean CONNS RPS DIRECT_RPS: the path's mean latency over direct's, in µs. wrk keeps every
# connection busy (no think time), so the mean latency is the connections over the requests per
# second (Little's law): a mean of every request of the run, where wrk's p50 is whole
# microseconds (22 against 23 µs is 1.05x) and follows how the requests queue, not how long
# they take in all.
added_mean() { awk -v c="$1" -v r="$2" -v d="$3" 'BEGIN { printf "%.1f", c * 1e6 / r - c * 1e6 / d }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
{
  echo "# yurthub benchmarks, $(date -u +%FT%TZ), $(nproc) cores, ${runs} runs x ${duration}s, medians"
  echo
  for layout in "${layouts[@]}"; do
    if [ "$layout" = one-cpu ]; then
      echo "## 1. Small GET of one pod ($target), one CPU (wrk, proxy and apiserver on CPU 0: the verdict); added = the path's p50 (or mean, from req/s) minus direct's"
    else
      echo "## 1b. The same, where the scheduler puts them (placement moves these from one bench to the next)"
    fi
    echo
    echo "| path | conns | p50 µs | p99 µs | req/s | added p50 µs | added vs nginx's | round by round: median (range) | added mean µs | added mean vs nginx's | req/s vs nginx | proxy CPU µs per request | vs nginx's |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    for c in 1 32; do
      for name in direct nginx hub hub-cached; do
        k=$layout/$name/$c
        added=$(( ${p50[$k]} - ${p50[$layout/direct/$c]} ))
        nginx_added=$(( ${p50[$layout/nginx/$c]} - ${p50[$layout/direct/$c]} ))
        vs_nginx=$(ratio "$added" "$nginx_added")
        mean=$(added_mean "$c" "${rps[$k]}" "${rps[$layout/direct/$c]}")
        nginx_mean=$(added_mean "$c" "${rps[$layout/nginx/$c]}" "${rps[$layout/direct/$c]}")
        mean_vs_nginx=$(ratio "$mean" "$nginx_mean")
        rps_ratio=$(ratio "${rps[$k]}" "${rps[$layout/nginx/$c]}")
        cpu="${cpu_us[$k]}"; cpu_ratio=$(ratio "${cpu_us[$k]}" "${cpu_us[$layout/nginx/$c]}")
        rounds=${paired[$k]:--}
        [ "$name" = direct ] && { added="-"; vs_nginx="-"; mean="-"; mean_vs_nginx="-"; cpu="-"; cpu_ratio="-"; }
        echo "| $name | $c | ${p50[$k]} | ${p99[$k]} | ${rps[$k]} | $added | $vs_nginx | $rounds | $mean | $mean_vs_nginx | $rps_ratio | $cpu | $cpu_ratio |"
      done
    done
    echo
  done
  echo "## 2. A $(awk -v b="$list_bytes" 'BEGIN { printf "%.1f", b / 1048576 }') MiB list of 10,000 pods ($list_target), time to last byte, median of $list_runs"
  echo
  echo "| path | ms | middle half, ms | vs direct | vs nginx | vs the hub passing it through |"
  echo "|---|---|---|---|---|---|"
  for name in direct nginx hub hub-cached; do
    echo "| $name | ${list_ms[$name]} | ${list_quartiles[$name]} | $(ratio "${list_ms[$name]}" "${list_ms[direct]}") | $(ratio "${list_ms[$name]}" "${list_ms[nginx]}") | $(ratio "${list_ms[$name]}" "${list_ms[hub]}") |"
  done
  echo
  echo "## 3. Against the budgets (design.md §8), and the rest"
  echo
  echo "| measure | value | baseline or budget | verdict |"
  echo "|---|---|---|---|"
  echo "| hub RSS, idle (5 s after start) | $(mib "$hub_idle_rss") MiB | ≤ 15 MB (YurtHub: 35–40 MB) | $( [ "$hub_idle_rss" -le 14648 ] && echo met || echo MISSED ) |"
  echo "| hub RSS after the small GETs | $(mib "$hub_busy_rss") MiB | nginx (master + worker): $(mib "$nginx_rss") MiB | - |"
  echo "| hub peak RSS, 20 MB list passed through | $(mib "$hub_pass_hwm") MiB | before the lists: $(mib "$hub_before_list_hwm") MiB | - |"
  echo "| hub peak RSS, 20 MB list cached for kubelet | $(mib "$hub_list_hwm") MiB | - | - |"
  echo "| hub RSS with the 10,000 pods cached for kubelet | $(mib "$hub_cached_rss") MiB (anonymous $(mib "$hub_cached_anon"), file and LMDB map $(mib "$hub_cached_file")) | idle: $(mib "$hub_idle_rss") MiB | - |"
  per_mb=$(awk -v c="$burst_cpu" -v b="$upstream_bytes" 'BEGIN { printf "%.3f", c / (b / 1e6) }')
  echo "| hub CPU for 10,000 EndpointSlice events (kube-proxy: filtered and cached) | $burst_cpu CPU-s in $burst_seconds s = $per_mb CPU-s per MB from the apiserver ($(awk -v b="$upstream_bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB in, $(awk -v b="$client_bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB out) | YurtHub: 22–25% of a core at 780 KB/s = 0.28–0.32 CPU-s per MB | $(awk -v p="$per_mb" 'BEGIN { print (p < 0.28) ? "better" : "NOT better" }') |"
  echo "$inprocess"
} | tee "$work/results.md"
echo
echo "bench: logs and results in $work"
echo
# 5. Pool sharing (issue 32): its own servers, after these are stopped.
BENCH_SKIP_BUILD=1 BENCH_BUILD_DIR=$bin bash test/bench/pool_sharing.sh
