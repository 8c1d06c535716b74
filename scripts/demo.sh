#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, then runs the hub in front of the
# bundled fake apiserver (test/fake_apiserver) and shows, with kubectl through the hub:
# online proxying (get, watch, apply, whoami), filtering (kube-proxy's pool-scoped endpoints), the
# hub's metrics, offline service from the node's cache when the cloud goes away (reads, a pod
# status patch kept in the write journal, a label patch the node's identity may not make refused
# with 403), then the cloud coming back and receiving the journaled patch. Ports: the hub uses its
# real defaults (10261 proxy, 10268 HTTPS proxy, 10267 admin) unless YURTHUB_DEMO_PROXY_PORT / _SECURE_PORT / _ADMIN_PORT say otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bash scripts/setup.sh
bash scripts/build.sh default

bin=$root/build/default
work=$(mktemp -d /tmp/yurthub-demo.XXXXXX)
proxy_port=${YURTHUB_DEMO_PROXY_PORT:-10261}
admin_port=${YURTHUB_DEMO_ADMIN_PORT:-10267}
secure_port=${YURTHUB_DEMO_SECURE_PORT:-10268}
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@" || true; }
# Waits for a log line and prints its first capture group.
wait_log() {
  local file=$1 regex=$2 text
  for _ in $(seq 1 200); do
    text=$(cat "$file" 2>/dev/null || true)
    if [[ $text =~ $regex ]]; then echo "${BASH_REMATCH[1]}"; return 0; fi
    sleep 0.05
  done
  echo "demo: timed out waiting for '$regex' in $file" >&2; cat "$file" >&2; exit 1
}
http_get() {  # http_get PORT PATH: plain GET without curl
  exec 3<>"/dev/tcp/127.0.0.1/$1"
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
  sed '1,/^\r$/d' <&3
  exec 3<&-
}

bash scripts/gen-certs.sh "$work/pki" edge-node-1 >/dev/null
start_apiserver() {
  "$bin/test/fake_apiserver/fake_apiserver" --cert="$work/pki/apiserver.crt" --key="$work/pki/apiserver.key" \
    --client-ca="$work/pki/ca.crt" --token-file="$work/pki/tokens.csv" --port="${api_port:-0}" \
    --seed="$root/test/testdata/fake_apiserver/demo-objects.json" >>"$work/apiserver.log" 2>&1 &
  api_pid=$!; pids+=("$api_pid")
  api_port=$(wait_log "$work/apiserver.log" 'listening on 127\.0\.0\.1:([0-9]+)')
}
start_apiserver
say "fake apiserver (bundled, test/fake_apiserver) on https://127.0.0.1:$api_port"
kd() { kubectl --kubeconfig=/dev/null --server="https://127.0.0.1:$api_port" --certificate-authority="$work/pki/ca.crt" \
  --client-certificate="$work/pki/admin.crt" --client-key="$work/pki/admin.key" --cache-dir="$work/kcache-direct" "$@"; }
# Make kubectl a cache agent (as an operator would with yurt-hub-cfg), so it works offline too.
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yurt-hub-cfg\n  namespace: kube-system\ndata:\n  cache_agents: kubectl\n' | kd apply -f - >/dev/null

"$bin/cmd/yurthub" --server-addr="https://127.0.0.1:$api_port" --node-name=edge-node-1 \
  --kubeconfig="$work/pki/hub.kubeconfig" --proxy-port="$proxy_port" --serve-port="$admin_port" \
  --proxy-secure-port="$secure_port" --tls-cert-file="$work/pki/hub-server.crt" \
  --tls-private-key-file="$work/pki/hub-server.key" \
  --disk-cache-path="$work/cache" --heartbeat-interval-seconds=2 \
  --enable-dummy-if=false >"$work/hub.log" 2>&1 &  # no interface created on this machine
pids+=("$!")
wait_log "$work/hub.log" 'proxy listening on (127\.0\.0\.1:[0-9]+)' >/dev/null
wait_log "$work/hub.log" 'apiserver (https://[^ ]+) is healthy' >/dev/null
wait_log "$work/hub.log" 'cache agents: ([a-z,-]*kubectl)' >/dev/null  # yurt-hub-cfg was read
say "yurthub on http://127.0.0.1:$proxy_port (admin on :$admin_port); its log: $work/hub.log"

k() { kubectl --kubeconfig=/dev/null --server="http://127.0.0.1:$proxy_port" --cache-dir="$work/kcache" "$@"; }

say "kubelet-style access through the hub, no credentials (the hub lends its node identity)"
run k get nodes
run k get pods -A -o wide
run k auth whoami
say "kubelet lists its pods (kubelet's User-Agent and query): the hub caches what it reads"
kubelet_pods() {
  exec 3<>"/dev/tcp/127.0.0.1/$proxy_port"
  printf 'GET /api/v1/pods?fieldSelector=spec.nodeName%%3Dedge-node-1 HTTP/1.0\r\nUser-Agent: kubelet/v1.32.4\r\n\r\n' >&3
  sed '1,/^\r$/d' <&3 | head -c 160; echo " ..."
  exec 3<&-
}
kubelet_pods

say "filtering: service web is pool-scoped (openyurt.io/topologyKeys); edge-node-1 is in pool-a, edge-node-2 in pool-b"
slice_nodes() {  # slice_nodes USER-AGENT: the nodes of web's endpoints in an EndpointSlice list
  exec 3<>"/dev/tcp/127.0.0.1/$proxy_port"
  printf 'GET /apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%%2Fservice-name%%3Dweb HTTP/1.0\r\nUser-Agent: %s\r\n\r\n' "$1" >&3
  sed '1,/^\r$/d' <&3 | grep -o '"nodeName":"[^"]*"' | tr '\n' ' '; echo
  exec 3<&-
}
printf 'as kubectl (unfiltered):     '; slice_nodes kubectl/v1.32
printf 'as kube-proxy (servicetopology): '; slice_nodes kube-proxy/v1.32

say "a pod's service-account token, over the HTTPS port (10268), reaches the apiserver as the pod"
run kubectl --kubeconfig=/dev/null --server="https://127.0.0.1:$secure_port" \
  --certificate-authority="$work/pki/ca.crt" --token=pod-token-0123456789 --cache-dir="$work/kcache2" auth whoami

say "writes go through: apply and patch a ConfigMap"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\n  namespace: default\ndata:\n  step: "1"\n' | k apply -f -
run k patch configmap demo -n default --type merge -p '{"data":{"step":"2"}}'
run k get configmap demo -n default -o jsonpath='{.data.step}{"\n"}'

say "a watch streams events as they happen (3 s)"
k get configmaps -n default -w --output-watch-events >"$work/watch.out" 2>&1 &
watch_pid=$!; pids+=("$watch_pid")
sleep 1
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo-2\n  namespace: default\n' | k apply -f - >/dev/null
k delete configmap demo -n default >/dev/null
sleep 2; kill "$watch_pid" 2>/dev/null || true
cat "$work/watch.out"

say "the cloud goes away: the apiserver is killed with a watch open"
k get nodes -w >"$work/watch2.out" 2>&1 &
watch_pid=$!; pids+=("$watch_pid")
sleep 1
start=$(date +%s%N)
{ kill -9 "$api_pid" && wait "$api_pid"; } 2>/dev/null || true
while kill -0 "$watch_pid" 2>/dev/null; do sleep 0.05; done
echo "kubectl's watch ended $(( ($(date +%s%N) - start) / 1000000 )) ms after the apiserver died"
sleep 1
say "offline: reads are answered from the node's LMDB cache"
run k get pods -A
run k get nodes
echo "(kubelet's pod list, offline:)"
kubelet_pods
run k get configmaps -n default
echo "(listed by kubectl's watch earlier, so cached; never listed, a 404 rather than an empty list:)"
run k get secrets -n default
run k delete configmap demo-2 -n default
echo "(deletes need the cloud: 503)"
say "offline: kubelet's status patch is applied to the node's cache and journaled for the cloud"
run k patch pod web-0 -n default --subresource=status -p '{"status":{"message":"written offline"}}'
run k get pod web-0 -n default -o jsonpath='{.status.message}{"\n"}'
"$bin/cmd/yurthub" journal ls --disk-cache-path="$work/cache"
echo "(what the node's identity may not write, the hub refuses offline as the apiserver would: 403)"
run k label pod web-0 -n default edge-note=written-offline
say "what the node has cached: yurthub cache ls"
"$bin/cmd/yurthub" cache ls --disk-cache-path="$work/cache"

say "the hub's view, from its metrics (http://127.0.0.1:$admin_port/metrics)"
http_get "$admin_port" /metrics | grep -E '^node_yurthub_(server_healthy_status|streams_ended_total|requests_total\{verb="get",resource="nodes")' || true

say "the cloud comes back: the hub probes it healthy and traffic flows again"
start_apiserver
for _ in $(seq 1 100); do k get nodes >/dev/null 2>&1 && break; sleep 0.2; done
run k get nodes
echo "(the journal is replayed: the cloud now has the status written offline)"
for _ in $(seq 1 50); do kd get pod web-0 -n default -o jsonpath='{.status.message}' 2>/dev/null | grep -q offline && break; sleep 0.2; done
run kd get pod web-0 -n default -o jsonpath='{.status.message}{"\n"}'
say "done; logs are in $work"
