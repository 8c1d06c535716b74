#!/usr/bin/env bash
# By hand, not in CI (it needs the real kube-apiserver v1.26 of ../shared/harness): two checks of
# issue 30 against the real apiserver, which the fake cannot make. First, offline, a
# service-account token the hub never saw is verified by the issuer's keys (the real keys and
# tokens). Second, a list asked at an old resourceVersion with resourceVersionMatch=Exact, which
# the real apiserver answers from etcd with that past snapshot, never rolls kubelet's cached
# set back. Steps:
#   1. the real apiserver, the ClusterRoleBinding of docs/operations.md, a pod on the node, and a
#      Role letting its service account list ConfigMaps; the hub through a cuttable relay;
#   2. the hub reads the issuer's documents (node_yurthub_service_account_keys_available 1);
#   3. the service account lists ConfigMaps through the hub with a first token (as kube-proxy, a
#      cache agent by default: the node may not read yurt-hub-cfg here); a second token is
#      issued by the apiserver directly (kubelet's rotation) and never sent through the hub;
#   4. kubelet lists its pods (resourceVersion A), the pod's label changes, kubelet lists again
#      (B); a caller with kubelet's User-Agent lists at A with Exact and gets the old label;
#   5. the link is cut: the second token lists the ConfigMaps from the cache (200), and a copy of
#      it with another service account in its claims gets 503 (the verdicts' metric is printed);
#      kubelet's offline list has the new label (node_yurthub_cache_older_lists_total 1).
# Prerequisites: the harness built (see ../shared/harness/README.md), socat, a built hub.
# Usage: real_apiserver_offline_identity.sh [WORK_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
harness=${HARNESS:-$root/../shared/harness}
work=${1:-$(mktemp -d /tmp/token-keys.XXXXXX)}
hub_bin=${HUB_BIN:-$root/build/default/cmd/yurthub}
node=edge-node-1
state=$work/k8s
log() { echo "[$(date +%T)] $*"; }
die() { log "FAILED: $*"; exit 1; }
for b in kube-apiserver etcd socat kubectl curl; do command -v $b >/dev/null || die "$b is missing"; done
[ -x "$hub_bin" ] || die "no hub at $hub_bin"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  bash "$harness/apiserver-down.sh" "$state" >/dev/null 2>&1 || true
}
trap cleanup EXIT

bash "$harness/apiserver-up.sh" "$state" >/dev/null 2>"$work/apiserver-up.log" ||
  die "apiserver-up: $(tail -3 "$work/apiserver-up.log")"
admin() { kubectl --kubeconfig "$state/admin.kubeconfig" "$@"; }
admin apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: yurthub-service-account-issuer-discovery}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:service-account-issuer-discovery}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: system:nodes}]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: default, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: read-configmaps, namespace: default}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get, list, watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: read-configmaps, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: read-configmaps}
subjects: [{kind: ServiceAccount, name: default, namespace: default}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app-settings, namespace: default}
data: {mode: edge}
---
apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: default}
spec:
  nodeName: $node
  containers: [{name: web, image: registry.example/web:1}]
YAML

socat TCP-LISTEN:26443,bind=127.0.0.1,reuseaddr,fork TCP:127.0.0.1:6443 >"$work/relay.log" 2>&1 &
relay=$!; pids+=($relay)
"$hub_bin" --server-addr=https://127.0.0.1:26443 --node-name=$node \
  --kubeconfig="$state/node-$node.kubeconfig" --disk-cache-path="$work/cache" \
  --root-dir="$work/hub-root" --enable-dummy-if=false --enable-resource-filter=false \
  >"$work/hub.log" 2>&1 &
pids+=($!)
metric() { curl -s http://127.0.0.1:10267/metrics | awk -v s="$1" '$1 == s {print $2}'; }
for _ in $(seq 1 300); do
  [ "$(metric node_yurthub_service_account_keys_available)" = 1 ] && break; sleep 0.1
done
[ "$(metric node_yurthub_service_account_keys_available)" = 1 ] ||
  die "the hub kept no keys: $(grep -i 'openid\|jwks\|keys' "$work/hub.log" | tail -3)"
log "the hub keeps the real apiserver's service-account keys"

token() { admin create token default -n default --bound-object-kind=Pod --bound-object-name=web-0 "$@"; }
first=$(token --duration=1h)
rotated=$(token --duration=2h)
list() { curl -s -o "$work/out" -w '%{http_code}' -A kube-proxy/v1.26.1 -H "Authorization: Bearer $1" \
  http://127.0.0.1:10261/api/v1/namespaces/default/configmaps; }
code=$(curl -s -o "$work/out" -w "%{http_code}" -A kubelet/v1.26.1 http://127.0.0.1:10261/api/v1/namespaces/default/pods/web-0)
[ "$code" = 200 ] ||
  die "kubelet's GET of its pod: $code $(cat "$work/out")"
[ "$(list "$first")" = 200 ] || die "online list with the first token: $(cat "$work/out")"

pods="http://127.0.0.1:10261/api/v1/pods?fieldSelector=spec.nodeName%3D$node"
label_of() { grep -o '"release":"[a-z0-9]*"' | head -1; }
rv_of() { grep -o '"resourceVersion":"[0-9]*"' | head -1 | grep -o '[0-9]*'; }
admin label pod web-0 -n default release=one >/dev/null
old_rv=$(curl -s -A kubelet/v1.26.1 "$pods" | rv_of)
admin label pod web-0 -n default release=two --overwrite >/dev/null
[ "$(curl -s -A kubelet/v1.26.1 "$pods" | label_of)" = '"release":"two"' ] || die "kubelet's new list"
old=$(curl -s -A kubelet/v1.26.1 "$pods&resourceVersion=$old_rv&resourceVersionMatch=Exact" | label_of)
[ "$old" = '"release":"one"' ] || die "the apiserver did not answer the old snapshot: $old"
log "the real apiserver answered resourceVersion=$old_rv&resourceVersionMatch=Exact with $old"
sleep 1
kill "$relay"; pkill -f "TCP-LISTEN:26443" || true
for _ in $(seq 1 150); do
  [ "$(metric "node_yurthub_server_healthy_status{server=\"https://127.0.0.1:26443\"}")" = 0 ] && break
  sleep 0.1
done
log "link cut"
code=$(list "$rotated")
[ "$code" = 200 ] && grep -q app-settings "$work/out" ||
  die "offline, the rotated token got $code: $(cat "$work/out")"
log "offline, a token the hub never saw read its service account's ConfigMaps (200)"
claims=$(echo "$rotated" | cut -d. -f2 | tr '_-' '/+' | base64 -d 2>/dev/null || true)
forged_claims=$(printf '%s' "$claims" | sed 's/"name":"default"/"name":"admin"/' |
  basenc --base64url -w0 | tr -d '=')
forged="$(echo "$rotated" | cut -d. -f1).$forged_claims.$(echo "$rotated" | cut -d. -f3)"
code=$(list "$forged")
[ "$code" = 503 ] || die "a forged token got $code: $(cat "$work/out")"
log "a forged token got 503"
curl -s http://127.0.0.1:10267/metrics | grep '^node_yurthub_offline_callers_total'
now=$(curl -s -A kubelet/v1.26.1 "$pods" | label_of)
[ "$now" = '"release":"two"' ] || die "kubelet's offline list was rolled back: $now"
[ "$(metric node_yurthub_cache_older_lists_total)" = 1 ] || die "older_lists metric"
log "offline, kubelet's list still has $now (the old snapshot was relayed, not cached)"
log "PASSED"
