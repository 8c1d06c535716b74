#!/usr/bin/env bash
# By hand, not in CI (it needs the real kube-apiserver and kube-controller-manager v1.26 of
# ../shared/harness): issue 31's drop-in checks against the real control plane, which the fake
# cannot make. The hub runs as today's OpenYurt installs it, --bootstrap-mode=kubeletcertificate
# with the node's kubeconfig, and no --node-ip. Steps:
#   1. the real apiserver with the harness's objects and OpenYurt's RBAC (the node reads
#      yurt-hub-cfg), kube-controller-manager's csrsigning only
#      (nobody approves kubelet-serving CSRs, as in a cluster without yurt-manager);
#   2. the hub starts at once: 10261 serves, readyz is 500 and names the serving certificate;
#      the apiserver has a kubelet-serving CSR requested by system:node:edge-node-1;
#   3. the CSR approved (as yurt-manager's approver would), the real signer issues it, readyz
#      turns 200; the certificate names the default-route interface's address the hub chose;
#   4. a pod's service-account token goes through 10268, verified under the node IP and the
#      kubernetes ClusterIP, and reaches the apiserver as the service account; no token: 401;
#   5. the Autonomy condition: True with node.beta.openyurt.io/autonomy=true, False once removed,
#      each written through the node's own identity (NodeRestriction lets a node patch itself).
# Prerequisites: the harness built (see ../shared/harness/README.md), a built hub.
# Usage: real_apiserver_kubelet_certificate.sh [WORK_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
harness=${HARNESS:-$root/../shared/harness}
work=${1:-$(mktemp -d /tmp/kubelet-certificate.XXXXXX)}
hub_bin=${HUB_BIN:-$root/build/default/cmd/yurthub}
mkdir -p "$work"
state=$work/k8s
log() { echo "[$(date +%T)] $*"; }
die() { log "FAILED: $*"; exit 1; }
for b in kube-apiserver kube-controller-manager etcd kubectl curl openssl; do
  command -v $b >/dev/null || die "$b is missing"
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
. "$state/env.sh"
export KUBECONFIG=$HARNESS_ADMIN_KUBECONFIG
kubectl apply -f "$harness/sample-objects.yaml" >/dev/null
kubectl annotate node edge-node-1 node.beta.openyurt.io/autonomy=true --overwrite >/dev/null
kube-controller-manager --kubeconfig="$KUBECONFIG" --controllers=csrsigning --leader-elect=false \
  --cluster-signing-cert-file="$state/pki/ca.crt" --cluster-signing-key-file="$state/pki/ca.key" \
  --secure-port=0 >"$work/kcm.log" 2>&1 &
pids+=($!)

log "1-2. the hub in kubelet-certificate mode, no --node-ip"
"$hub_bin" --bootstrap-mode=kubeletcertificate --kubeconfig="$HARNESS_NODE_KUBECONFIG" \
  --root-dir="$work/root" --node-name=edge-node-1 --server-addr="$KUBE_APISERVER_URL" \
  --enable-dummy-if=false --proxy-port=0 --serve-port=0 --proxy-secure-port=0 \
  --disk-cache-path="$work/cache" --enable-resource-filter=false >"$work/hub.log" 2>&1 &
pids+=($!)
port() { grep -oE "$1 listening on 127\.0\.0\.1:[0-9]+" "$work/hub.log" | grep -oE '[0-9]+$'; }
for _ in $(seq 50); do [ -n "$(port admin || true)" ] && break; sleep 0.2; done
proxy=$(port proxy) admin=$(port admin) secure=$(port proxy_secure)
node_ip=$(grep -oE 'node ip is [0-9a-f.:]+' "$work/hub.log" | awk '{print $4}')
[ -n "$node_ip" ] || die "the hub chose no node ip: $(grep -i 'node ip' "$work/hub.log")"
curl -sf "http://127.0.0.1:$proxy/api/v1/namespaces/default/pods" -o /dev/null ||
  die "10261 does not serve"
ready=$(curl -s -w ' %{http_code}' "http://127.0.0.1:$admin/v1/readyz")
[[ $ready == *"serving certificate"*" 500" ]] || die "readyz before the approval: $ready"
csr=
for _ in $(seq 50); do
  csr=$(kubectl get csr -o jsonpath='{range .items[*]}{.metadata.name} {.spec.signerName} {.spec.username}{"\n"}{end}' |
    awk '$2 == "kubernetes.io/kubelet-serving" && $3 == "system:node:edge-node-1" {print $1}')
  [ -n "$csr" ] && break
  sleep 0.2
done
[ -n "$csr" ] || die "no kubelet-serving CSR from system:node:edge-node-1"
log "   10261 serves; readyz: $ready; CSR $csr by system:node:edge-node-1; node ip $node_ip"

log "3. approved, signed by kube-controller-manager"
kubectl certificate approve "$csr" >/dev/null
for _ in $(seq 100); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$admin/v1/readyz")" = 200 ] && break
  sleep 0.2
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$admin/v1/readyz")" = 200 ] ||
  die "readyz after the approval: $(curl -s "http://127.0.0.1:$admin/v1/readyz")"
names=$(openssl x509 -noout -subject -ext subjectAltName -in "$work/root/pki/yurthub-server-current.pem")
[[ $names == *"CN = system:node:edge-node-1"* && $names == *"IP Address:$node_ip"* ]] ||
  die "the certificate: $names"
log "   readyz 200; $(tr '\n' ' ' <<<"$names")"

log "4. a pod's token through 10268"
kubectl create serviceaccount default -n default >/dev/null 2>&1 || true
token=$(kubectl create token default -n default)
printf 'apiVersion: v1\nkind: Config\n' >"$work/empty.kubeconfig"
pod_kubectl() {
  kubectl --kubeconfig="$work/empty.kubeconfig" --server="https://127.0.0.1:$secure" \
    --certificate-authority="$HARNESS_CA" --request-timeout=10s "$@" </dev/null 2>&1 || true
}
for name in "$node_ip" 10.96.0.1; do
  out=$(pod_kubectl --tls-server-name="$name" --token="$token" get pods -n default)
  [[ $out == *'User "system:serviceaccount:default:default" cannot list'* ]] ||
    die "as the service account under $name: $out"
done
status=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$HARNESS_CA" \
  --resolve "kubernetes:$secure:127.0.0.1" "https://kubernetes:$secure/api/v1/namespaces/default/pods")
[ "$status" = 401 ] || die "no token on 10268: $status"
log "   the apiserver saw system:serviceaccount:default:default under $node_ip and 10.96.0.1; no token: 401"

log "5. the Autonomy condition"
condition() {
  kubectl get node edge-node-1 -o jsonpath='{range .status.conditions[?(@.type=="Autonomy")]}{.status} {.reason} {.lastTransitionTime}{end}'
}
for _ in $(seq 60); do [[ $(condition) == True* ]] && break; sleep 0.5; done
[[ $(condition) == True* ]] || die "Autonomy: $(condition)"
log "   $(condition)"
kubectl annotate node edge-node-1 node.beta.openyurt.io/autonomy- >/dev/null
for _ in $(seq 60); do [[ $(condition) == False* ]] && break; sleep 0.5; done
[[ $(condition) == False* ]] || die "Autonomy after the annotation went: $(condition)"
log "   $(condition)"
log "PASSED"
