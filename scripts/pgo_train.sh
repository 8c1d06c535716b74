#!/usr/bin/env bash
# The training run of the profile-guided build (scripts/pgo_build.sh): runs BUILD_DIR's yurthub in
# front of its fake apiserver and sends it what an edge node's clients send, so that the profile
# counts the hub's real paths, each in about the proportion a node sees them:
#   - kubelet: its pod and node again and again, its pod list, status patches (cached, written
#     through), a pod watch; kube-proxy: Services and EndpointSlices listed and watched while they
#     churn (servicetopology, cache); a component the hub does not cache (passed through);
#   - a pod over the HTTPS port with its own bearer token; a 4 MB list, passed through and cached;
#     a 12 MB EndpointSlice list through servicetopology;
#   - offline, after the apiserver is killed: kubelet's reads from the cache and a journaled patch.
# The mix is a node's: mostly small requests (kubelet's gets, status patches and lease renewals
# every few seconds, all day), and a few lists, one of 50k endpoints, and watch events. GCC counts
# a path hot by its share of all that ran: with a third as many small requests and eight 4 MB
# lists, the small GET's path came out lukewarm and cost 3% more CPU (37.4 against 36.2 µs per
# request, with the profile applied to the whole product). Every request must get the status the
# hub owes it, or the run fails: a profile of error paths would optimise the wrong code. About
# 15 s. ctest runs it with --quick (a twentieth of the requests, in about 5 s) against the default
# build (PgoTraining), so the workload cannot rot unseen.
# Usage: pgo_train.sh BUILD_DIR [--quick]   (needs curl and openssl)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "$1")
share=1  # of each count of requests: 1, or 20 with --quick
[ "${2:-}" = --quick ] && share=20
hub_bin=$build/cmd/yurthub
api_bin=$build/test/fake_apiserver/fake_apiserver
for b in "$hub_bin" "$api_bin"; do
  [ -x "$b" ] || { echo "pgo_train: no $b" >&2; exit 1; }
done
work=$(mktemp -d /tmp/yurthub-pgo-train.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "pgo_train: $*" >&2
  for f in "$work"/*.log; do echo "--- $f" >&2; tail -20 "$f" >&2; done
  exit 1
}

source "$root/test/bench/bench_lib.sh"  # wait_log FILE REGEX [SECONDS]

bash "$root/scripts/gen-certs.sh" "$work/pki" edge-node-1 >/dev/null
"$api_bin" --cert="$work/pki/apiserver.crt" --key="$work/pki/apiserver.key" \
  --client-ca="$work/pki/ca.crt" --token-file="$work/pki/tokens.csv" --port=0 \
  --seed="$root/test/testdata/fake_apiserver/demo-objects.json" \
  --generate-pods=2000 --generate-pod-bytes=2000 --generate-node=edge-node-1 \
  >"$work/apiserver.log" 2>&1 &
api_pid=$!; pids+=("$api_pid")
api_port=$(wait_log "$work/apiserver.log" 'listening on 127\.0\.0\.1:([0-9]+)' 30)
api=https://127.0.0.1:$api_port

"$hub_bin" --server-addr="$api" --node-name=edge-node-1 --kubeconfig="$work/pki/hub.kubeconfig" \
  --proxy-port=0 --proxy-secure-port=0 --serve-port=0 \
  --tls-cert-file="$work/pki/hub-server.crt" --tls-private-key-file="$work/pki/hub-server.key" \
  --disk-cache-path="$work/cache" --heartbeat-interval-seconds=2 --enable-dummy-if=false \
  >"$work/hub.log" 2>&1 &
hub_pid=$!; pids+=("$hub_pid")
port=$(wait_log "$work/hub.log" ' proxy listening on 127\.0\.0\.1:([0-9]+)' 30)
secure_port=$(wait_log "$work/hub.log" 'proxy_secure listening on 127\.0\.0\.1:([0-9]+)' 30)
wait_log "$work/hub.log" 'apiserver (https://[^ ]+) is healthy' 30 >/dev/null
hub=http://127.0.0.1:$port

kubelet="kubelet/v1.32.4 (linux/amd64) kubernetes/abc1234"
kube_proxy="kube-proxy/v1.32.4 (linux/amd64) kubernetes/abc1234"
pod=/api/v1/namespaces/default/pods/web-0
slices=/apis/discovery.k8s.io/v1/endpointslices

# expect_codes N EXPECT WHAT CODES: fails unless all N status codes (one per line) are EXPECT.
expect_codes() {
  local ok
  ok=$(grep -cx "$2" <<<"$4" || true)
  [ "$ok" -eq "$1" ] || fail "$ok of $1 $3 answered $2: $(sort <<<"$4" | uniq -c | tr '\n' ' ')"
}
# many N EXPECT URL [CURL ARGS...]: N requests of URL over one kept-alive connection; every one
# must answer EXPECT.
many() {
  local n=$(( ($1 + share - 1) / share )) expect=$2 url=$3; shift 3
  local config=$work/curl.config
  for _ in $(seq 1 "$n"); do printf 'url = "%s"\noutput = "/dev/null"\n' "$url"; done >"$config"
  expect_codes "$n" "$expect" "requests of $url" \
    "$(curl -s --max-time 120 -w '%{http_code}\n' -K "$config" "$@" || true)"
}
# churn QUERY: starts the fake apiserver's churn (test/fake_apiserver/churn.h) with QUERY.
churn() {
  curl -s -f -o /dev/null --cacert "$work/pki/ca.crt" \
    -H "Authorization: Bearer admin-token-0123456789" -X POST "$api/_fake/churn?$1" ||
    fail "the churn $1 did not start"
}
status_patch() {  # status_patch MESSAGE: kubelet's status patch of web-0, as its status manager sends it
  printf '{"status":{"$setElementOrder/conditions":[{"type":"Ready"}],"conditions":[{"type":"Ready","status":"True"}],"message":"%s"}}' "$1"
}

# Online: the steady state of a node.
many 10000 200 "$hub$pod" -A "kubectl/v1.26.0"  # not a cache agent: passed through
many 6000 200 "$hub$pod" -A "$kubelet"
many 2000 200 "$hub/api/v1/nodes/edge-node-1" -A "$kubelet"
many 50 200 "$hub/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1" -A "$kubelet"
many 100 200 "$hub/api/v1/services" -A "$kube_proxy"
many 200 200 "$hub$slices" -A "$kube_proxy"
many 1000 200 "https://127.0.0.1:$secure_port$pod" --cacert "$work/pki/ca.crt" \
  -H "Authorization: Bearer pod-token-0123456789"
# kubelet's status patches, each its own transfer (`next`) on the one connection.
patches=$(( 1000 / share ))
for i in $(seq 1 "$patches"); do
  [ "$i" -eq 1 ] || echo next
  printf 'url = "%s"\nrequest = "PATCH"\nuser-agent = "%s"\n' "$hub$pod/status" "$kubelet"
  printf 'header = "Content-Type: application/strategic-merge-patch+json"\noutput = "/dev/null"\n'
  printf "data = \"%s\"\nwrite-out = \"%%{http_code}\\\\n\"\n" "$(status_patch "online $i" | sed 's/"/\\"/g')"
done >"$work/patch.config"
expect_codes "$patches" 200 "status patches" "$(curl -s --max-time 120 -K "$work/patch.config" || true)"
many 2 200 "$hub/api/v1/namespaces/bulk/pods" -A "kubectl/v1.26.0"
many 1 200 "$hub/api/v1/namespaces/bulk/pods" -A "$kubelet"

# Watches while EndpointSlices and Services churn: kube-proxy's (filtered and cached) and
# kubelet's pod watch, each ended by its own timeout.
rv=$(curl -s -A "$kube_proxy" "$hub$slices" | grep -o '"resourceVersion":"[0-9]*"' | head -1 | tr -dc 0-9)
curl -s -N --max-time 30 -A "$kube_proxy" -o "$work/slices.watch" \
  "$hub$slices?watch=true&resourceVersion=$rv&timeoutSeconds=4" &
slices_watch=$!
curl -s -N --max-time 30 -A "$kubelet" -o "$work/pods.watch" \
  "$hub/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1&watch=true&timeoutSeconds=4" &
pods_watch=$!
sleep 0.5
churn "objects=50&events=1000&namespace=churn&resource=endpointslices&endpoints=10"
wait "$slices_watch" "$pods_watch" || fail "a watch failed"
events=$(grep -c '"type":"\(ADDED\|MODIFIED\)"' "$work/slices.watch" || true)
[ "$events" -gt 100 ] || fail "kube-proxy's watch got $events events"

# A big EndpointSlice list, as kube-proxy lists it at start on a large cluster: 500 slices of 100
# endpoints (12 MB) through servicetopology, so that the filters' loops are counted at their real
# lengths.
churn "objects=500&events=500&namespace=big&resource=endpointslices&endpoints=100"
wait_log "$work/apiserver.log" '(churn done events=500)' 30 >/dev/null
many 3 200 "$hub/apis/discovery.k8s.io/v1/namespaces/big/endpointslices" -A "$kube_proxy"

# Offline: the apiserver dies; kubelet reads from the cache and its status patch is journaled.
kill -9 "$api_pid"
wait "$api_pid" 2>/dev/null || true
many 1000 200 "$hub$pod" -A "$kubelet"
many 300 200 "$hub/api/v1/nodes/edge-node-1" -A "$kubelet"
many 20 200 "$hub/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-node-1" -A "$kubelet"
many 20 200 "$hub$slices" -A "$kube_proxy"
code=$(curl -s -o /dev/null -w '%{http_code}' -X PATCH -A "$kubelet" \
  -H "Content-Type: application/strategic-merge-patch+json" -d "$(status_patch offline)" "$hub$pod/status")
[ "$code" = 200 ] || fail "the offline status patch answered $code"

# The profile is written when the hub exits: SIGTERM, as systemd stops it.
kill -TERM "$hub_pid"
for _ in $(seq 1 600); do kill -0 "$hub_pid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$hub_pid" 2>/dev/null && fail "the hub did not stop within 30 s of SIGTERM"
wait "$hub_pid" || fail "the hub exited with $?"
echo "pgo_train: done"
