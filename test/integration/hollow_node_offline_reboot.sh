#!/usr/bin/env bash
# By hand, not in CI (it needs the real Kubernetes v1.26 binaries, which take minutes to build, and
# runs for as long as the node stays offline): the real kubelet and kube-proxy code (kubemark's
# hollow node) talking only to the hub, in front of a real kube-apiserver v1.26, through an offline
# node reboot. Checks issue 29's "done" by hand:
#   1. online: the hollow node registers through the hub and runs 3 pods;
#   2. the link is cut (a socat relay between hub and apiserver is killed), and after 30 s the node
#      "reboots": hub, kubelet and kube-proxy are killed with SIGKILL and started again;
#   3. for OFFLINE_MINUTES (default 15) the kubelet must stay up (its process alive, no `F` log
#      line), with 3 of 3 pods Running in the hub's view and its status patches journaled;
#   4. the link returns: node Ready and pods Running in the cloud, timed from the relay's restart.
# kube-controller-manager runs its node lifecycle controller (taint-based eviction off, as a node
# pool's autonomy would keep the pods), so the cloud marks the node Unknown while it is away and
# the figure in 4 means something.
#
# Prerequisites: `fetch github:Jiaxuan-C/kubernetes-1.26.0-migration`, then
# `bash ../shared/harness/build-k8s.sh <its git dir>` (kube-apiserver, kube-controller-manager,
# kubemark in /usr/local/bin; etcd and socat installed), and a built hub (build/default).
# Usage: hollow_node_offline_reboot.sh [WORK_DIR]   (OFFLINE_MINUTES=N to change the window)
# Everything runs on 127.0.0.1: apiserver :6443, relay :26443, hub :10261/:10267, kubelet :30250.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
harness=${HARNESS:-$root/../shared/harness}
work=${1:-$(mktemp -d /tmp/hollow-node.XXXXXX)}
offline_minutes=${OFFLINE_MINUTES:-15}
hub_bin=${HUB_BIN:-$root/build/default/cmd/yurthub}
node=edge-node-1
state=$work/k8s
mkdir -p "$work"
[ -z "$(ls -A "$work")" ] || { echo "$work is not empty" >&2; exit 1; }
log() { echo "[$(date +%T)] $*"; }
die() { log "FAILED: $*"; exit 1; }
for b in kube-apiserver kube-controller-manager kubemark etcd socat kubectl; do
  command -v $b >/dev/null || die "$b is missing (see the prerequisites at the top)"
done
[ -x "$hub_bin" ] || die "no hub at $hub_bin"

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  bash "$harness/apiserver-down.sh" "$state" >/dev/null 2>&1 || true
}
trap cleanup EXIT

WITH_OPENYURT=1 bash "$harness/apiserver-up.sh" "$state" >/dev/null 2>"$work/apiserver-up.log" ||
  die "apiserver-up: $(tail -3 "$work/apiserver-up.log")"
admin() { kubectl --kubeconfig "$state/admin.kubeconfig" "$@"; }

kube-controller-manager --kubeconfig="$state/admin.kubeconfig" --controllers=nodelifecycle \
  --enable-taint-manager=false --node-monitor-grace-period=40s --leader-elect=false \
  --secure-port=0 >"$work/controller-manager.log" 2>&1 &
pids+=($!)

# What a node's pods need without the other controllers: the service account, the root CA
# configmap, a Service with its EndpointSlice (kube-proxy's lists), and three pods bound to the node.
ca=$(sed 's/^/    /' "$state/pki/ca.crt")
admin apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: default, namespace: default}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kube-root-ca.crt, namespace: default}
data:
  ca.crt: |
$ca
---
apiVersion: v1
kind: ConfigMap
metadata: {name: yurt-hub-cfg, namespace: kube-system}
data:
  cache_agents: hollow-kubelet,hollow-proxy
  servicetopology: hollow-proxy
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-1
  namespace: default
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
endpoints: [{addresses: [192.0.2.11], nodeName: $node}]
ports: [{name: http, port: 8080, protocol: TCP}]
YAML
for i in 0 1 2; do
  admin apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: web-$i, namespace: default, labels: {app: web}}
spec:
  nodeName: $node
  containers: [{name: web, image: registry.example/web:1}]
YAML
done

socat TCP-LISTEN:26443,bind=127.0.0.1,reuseaddr,fork TCP:127.0.0.1:6443 >"$work/relay.log" 2>&1 &
relay=$!; pids+=($relay)

hub_start=0
start_hub() {
  hub_start=$((hub_start + 1))
  "$hub_bin" --server-addr=https://127.0.0.1:26443 --node-name=$node \
    --kubeconfig="$state/node-$node.kubeconfig" --disk-cache-path="$work/cache" \
    --root-dir="$work/hub-root" --enable-dummy-if=false \
    --nodepool-name=pool-a >"$work/hub-$hub_start.log" 2>&1 &
  hub=$!; pids+=($hub)
  for _ in $(seq 1 100); do curl -sf http://127.0.0.1:10267/v1/healthz >/dev/null && return; sleep 0.1; done
  die "the hub did not start: $(tail -5 "$work/hub-$hub_start.log")"
}
node_start=0
start_node() {
  node_start=$((node_start + 1))
  kubemark --morph=kubelet --name=$node --kubeconfig="$state/edge-proxy.kubeconfig" \
    --kubelet-port=30250 --kubelet-read-only-port=0 --use-host-image-service=false \
    --node-labels=apps.openyurt.io/nodepool=pool-a >"$work/kubelet-$node_start.log" 2>&1 &
  kubelet=$!; pids+=($kubelet)
  kubemark --morph=proxy --name=$node --kubeconfig="$state/edge-proxy.kubeconfig" \
    >"$work/proxy-$node_start.log" 2>&1 &
  proxy=$!; pids+=($proxy)
}
# The pods Running and the node Ready, as the cloud says.
cloud_running() {  # pods Running with their Ready condition True
  admin get pods -n default \
    -o jsonpath='{range .items[*]}{.status.phase}/{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
    grep -c '^Running/True$' || true
}
cloud_ready() { admin get node $node -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null; }
cloud_ok() { [ "$(cloud_ready) $(cloud_running)" = "True 3" ]; }
# The same, as kubelet sees them through the hub (its own cache agent's view, offline).
hub_pods() {
  curl -s -A hollow-kubelet "http://127.0.0.1:10261/api/v1/pods?fieldSelector=spec.nodeName%3D$node" |
    grep -o '"phase":"[A-Za-z]*"' | grep -c Running || true
}
wait_for() {  # wait_for SECONDS WHAT COMMAND...: polls COMMAND every second
  local limit=$1 what=$2; shift 2
  for _ in $(seq 1 "$limit"); do "$@" && return 0; sleep 1; done
  die "$what not within $limit s"
}

log "online: hub, then the hollow kubelet and kube-proxy"
start_hub
start_node
wait_for 180 "node Ready and 3 pods Running" cloud_ok
admin get csinode $node >/dev/null || die "no CSINode"
log "online: node Ready, 3/3 pods Running, CSINode created"
sleep 20  # kubelet's loops run once more online

log "cutting the link"
kill "$relay"; wait "$relay" 2>/dev/null || true
sleep 30
log "the node reboots offline: hub, kubelet and kube-proxy killed (SIGKILL) and started again"
kill -9 "$kubelet" "$proxy" "$hub"; wait "$kubelet" "$proxy" "$hub" 2>/dev/null || true
start_hub
start_node
restart_time=$(date +%s)
deadline=$((restart_time + offline_minutes * 60))
while [ "$(date +%s)" -lt "$deadline" ]; do
  sleep 30
  kill -0 "$kubelet" 2>/dev/null || die "the kubelet exited offline: $(grep -E '^[EF]' "$work/kubelet-$node_start.log" | tail -5)"
  kill -0 "$proxy" 2>/dev/null || die "kube-proxy exited offline: $(tail -5 "$work/proxy-$node_start.log")"
  log "offline $(( ($(date +%s) - restart_time) / 60 )) min: kubelet up, $(hub_pods)/3 pods Running (hub's view), journal: $(curl -s http://127.0.0.1:10267/metrics | grep '^node_yurthub_journal_entries ' | cut -d' ' -f2) entries"
done
[ "$(hub_pods)" = 3 ] || die "$(hub_pods)/3 pods Running in the hub's view at the end of the window"
grep -q '^F' "$work/kubelet-$node_start.log" && die "a fatal kubelet line: $(grep '^F' "$work/kubelet-$node_start.log")"
log "kubelet's E lines while offline ($(grep -c '^E' "$work/kubelet-$node_start.log") in all), by message:"
grep '^E' "$work/kubelet-$node_start.log" | sed -E 's/^E[0-9]+ [0-9:.]+ +[0-9]+ //' | cut -c1-160 |
  sed -E 's/[0-9a-f]{8}-[0-9a-f-]{27}/<uid>/g' | sort | uniq -c | sort -rn | head -20
"$hub_bin" journal ls --disk-cache-path="$work/cache" | tail -4

log "before the link returns, the cloud says: node Ready=$(cloud_ready), $(cloud_running)/3 pods Running and Ready"
log "the link returns"
socat TCP-LISTEN:26443,bind=127.0.0.1,reuseaddr,fork TCP:127.0.0.1:6443 >>"$work/relay.log" 2>&1 &
pids+=($!)
back=$(date +%s.%N)
node_ready=""
for _ in $(seq 1 600); do
  [ -z "$node_ready" ] && [ "$(cloud_ready)" = True ] && node_ready=$(date +%s.%N)
  cloud_ok && break
  sleep 0.1
done
ready=$(date +%s.%N)
cloud_ok || die "the cloud does not see the node Ready with 3 pods Running"
since_back() { awk "BEGIN{printf \"%.1f\", $1 - $back}"; }
log "the cloud sees the node Ready $(since_back "${node_ready:-$ready}") s, and 3/3 pods Running and Ready $(since_back "$ready") s, after the link returned"
log "journal after the replay: $(curl -s http://127.0.0.1:10267/metrics | grep -E '^node_yurthub_journal_(entries|removed_total)' | tr '\n' ' ')"
log "PASSED; logs in $work"
