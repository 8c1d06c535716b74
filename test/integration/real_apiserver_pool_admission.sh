#!/usr/bin/env bash
# By hand, not in CI (it needs the real kube-apiserver v1.26 of ../shared/harness): pool-admission
# (docs/pool-admission.md) registered with the real kube-apiserver through the webhook
# configurations of docs/examples/pool-admission.yaml (their clientConfig turned into a loopback
# URL) and running as the manifest's ServiceAccount with its ClusterRole, which the fake apiserver
# cannot check (it calls no webhook and allows everything). Steps:
#   1. the real apiserver with the NodePool CRD (v1beta1), nodes edge-node-1 (pool-a) and
#      edge-node-2 (pool-b, hostNetwork); the manifest's RBAC; a token of its ServiceAccount;
#   2. pool-admission labels the nodes false and true;
#   3. pods created through the apiserver: an annotated pod with two terms and a preferred term
#      gets the requirement in both terms; an annotated hostNetwork pod with only a containerPort
#      is admitted unchanged (hostPort defaulted); an annotated pod without affinity gets one term;
#   4. the cluster admin may not add, change or remove the node label (403 from the webhook), but
#      may change other labels; the labeller, as the ServiceAccount, may: pool-a turned
#      hostNetwork relabels edge-node-1;
#   5. pool-admission stopped, pool-a turned back, pool-admission started: edge-node-1 is false.
# Prerequisites: the harness built (see ../shared/harness/README.md), openssl, python3 with yaml,
# a built pool-admission. Usage: real_apiserver_pool_admission.sh [WORK_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
harness=${HARNESS:-$root/../shared/harness}
work=${1:-$(mktemp -d /tmp/pool-admission.XXXXXX)}
bin=${POOL_ADMISSION_BIN:-$root/build/default/cmd/pool-admission}
state=$work/k8s
port=${WEBHOOK_PORT:-39443}
log() { echo "[$(date +%T)] $*"; }
die() { log "FAILED: $*"; exit 1; }
for b in kube-apiserver etcd kubectl openssl python3; do command -v $b >/dev/null || die "$b is missing"; done
[ -x "$bin" ] || die "no pool-admission at $bin"
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  bash "$harness/apiserver-down.sh" "$state" >/dev/null 2>&1 || true
}
trap cleanup EXIT

WITH_OPENYURT=1 bash "$harness/apiserver-up.sh" "$state" >/dev/null 2>"$work/apiserver-up.log" ||
  die "apiserver-up: $(tail -3 "$work/apiserver-up.log")"
. "$state/env.sh"
admin() { kubectl --kubeconfig "$HARNESS_ADMIN_KUBECONFIG" "$@"; }
admin apply -f "$harness/sample-objects.yaml" >/dev/null
admin apply -f - >/dev/null <<YAML
apiVersion: apps.openyurt.io/v1beta1
kind: NodePool
metadata: {name: pool-a}
spec: {type: Edge}
---
apiVersion: apps.openyurt.io/v1beta1
kind: NodePool
metadata: {name: pool-b}
spec: {type: Edge, hostNetwork: true}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: default, namespace: default}
YAML

# The manifest's RBAC as it is; its webhooks pointed at the loopback port with a CA of our own.
cd "$work"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -keyout ca.key -out ca.crt -subj /CN=pool-admission-ca 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout tls.key \
  -subj /CN=pool-admission -out tls.csr 2>/dev/null
openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -out tls.crt \
  -extfile <(printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth') 2>/dev/null
python3 - "$root/docs/examples/pool-admission.yaml" "$port" <<'PY'
import base64, sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
rbac = [d for d in docs if d["kind"] in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding")]
hooks = [d for d in docs if d["kind"].endswith("WebhookConfiguration")]
ca = base64.b64encode(open("ca.crt", "rb").read()).decode()
for d in hooks:
    for w in d["webhooks"]:
        url = "https://127.0.0.1:" + sys.argv[2] + w["clientConfig"]["service"]["path"]
        w["clientConfig"] = {"url": url, "caBundle": ca}
yaml.safe_dump_all(rbac, open("rbac.yaml", "w"))
yaml.safe_dump_all(hooks, open("hooks.yaml", "w"))
PY
admin apply -f rbac.yaml >/dev/null
token=$(admin -n kube-system create token pool-admission --duration=1h)
cat > labeller.kubeconfig <<YAML
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$KUBE_APISERVER_URL", certificate-authority: $HARNESS_CA}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
users: [{name: u, user: {token: "$token"}}]
YAML
start() {
  "$bin" --kubeconfig=labeller.kubeconfig --tls-cert-file=tls.crt --tls-private-key-file=tls.key \
    --secure-port="$port" --bind-address=127.0.0.1 >>"$work/pool-admission.log" 2>&1 &
  pid=$!
}
labels() { admin get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.labels.nodepool\.openyurt\.io/hostnetwork} {end}'; }
wait_labels() {
  for _ in $(seq 100); do [ "$(labels)" = "$1" ] && return 0; sleep 0.1; done
  die "labels are '$(labels)', not '$1'"
}

start
wait_labels "edge-node-1=false edge-node-2=true "
log "labeller: edge-node-1=false (pool-a), edge-node-2=true (pool-b, hostNetwork)"
admin apply -f hooks.yaml >/dev/null
sleep 1  # the apiserver's webhook configuration informer

admin apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: two-terms
  namespace: default
  annotations: {apps.openyurt.io/exclude-host-network-pool: "true"}
spec:
  automountServiceAccountToken: false
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [hangzhou]}]
        - matchFields: [{key: metadata.name, operator: In, values: [edge-node-1]}]
      preferredDuringSchedulingIgnoredDuringExecution:
      - {weight: 10, preference: {matchExpressions: [{key: a, operator: Exists}]}}
  containers: [{name: web, image: nginx, ports: [{containerPort: 80}]}]
---
apiVersion: v1
kind: Pod
metadata:
  name: host-network
  namespace: default
  annotations: {apps.openyurt.io/exclude-host-network-pool: "true"}
spec:
  automountServiceAccountToken: false
  hostNetwork: true
  containers: [{name: dns, image: coredns, ports: [{containerPort: 53, protocol: UDP}]}]
---
apiVersion: v1
kind: Pod
metadata:
  name: no-affinity
  namespace: default
  annotations: {apps.openyurt.io/exclude-host-network-pool: "true"}
spec:
  automountServiceAccountToken: false
  containers: [{name: web, image: nginx}]
YAML
requirement='{"key":"nodepool.openyurt.io/hostnetwork","operator":"NotIn","values":["true"]}'
terms=$(admin get pod two-terms -o jsonpath='{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms}')
[ "$(grep -o -F "$requirement" <<<"$terms" | wc -l)" = 2 ] || die "two-terms: $terms"
[ -n "$(admin get pod two-terms -o jsonpath='{.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution}')" ] ||
  die "two-terms lost its preferred term"
[ -z "$(admin get pod host-network -o jsonpath='{.spec.affinity}')" ] || die "host-network was changed"
[ "$(admin get pod host-network -o jsonpath='{.spec.containers[0].ports[0].hostPort}')" = 53 ] ||
  die "host-network's hostPort is not defaulted to 53"
[ "$(admin get pod no-affinity -o jsonpath='{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms}')" = "[{\"matchExpressions\":[$requirement]}]" ] ||
  die "no-affinity: $(admin get pod no-affinity -o jsonpath='{.spec.affinity}')"
log "pods: the requirement in both terms, the hostNetwork pod unchanged, one term created"

for change in nodepool.openyurt.io/hostnetwork=true nodepool.openyurt.io/hostnetwork-; do
  out=$(admin label node edge-node-1 "$change" --overwrite 2>&1) && die "admin's $change went through"
  grep -q 'denied the request' <<<"$out" || die "admin's $change: $out"
done
admin label node edge-node-1 team=edge >/dev/null || die "another label was refused"
admin patch nodepools.apps.openyurt.io pool-a --type=merge -p '{"spec":{"hostNetwork":true}}' >/dev/null
wait_labels "edge-node-1=true edge-node-2=true "
log "node label: refused to the admin, set by the labeller when pool-a turned hostNetwork"

kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
admin patch nodepools.apps.openyurt.io pool-a --type=merge -p '{"spec":{"hostNetwork":false}}' >/dev/null
start
wait_labels "edge-node-1=false edge-node-2=true "
log "restart: edge-node-1 relabelled false from the first lists"
log "PASSED"
