#!/usr/bin/env bash
# Builds the seed corpus of every fuzz target in test/fuzz from the repository's test data (the
# apiserver captures in test/testdata/fixtures/apiserver-v1.26, the patch cases in
# test/testdata/patches, the fake apiserver's objects) plus a few requests, selectors and
# kubeconfigs written here. Run by scripts/fuzz.sh; nothing it writes is committed.
# Usage: seed_corpus.sh OUT_DIR   (creates OUT_DIR/<target>/, replacing what was there)
set -euo pipefail
out=${1:?usage: seed_corpus.sh OUT_DIR}
root="$(cd "$(dirname "$0")/../.." && pwd)"
fx="$root/test/testdata/fixtures/apiserver-v1.26"
patches="$root/test/testdata/patches"
targets=(json_parse_fuzz request_info_fuzz http_request_fuzz list_framer_fuzz watch_framer_fuzz
         gzip_fuzz label_selector_fuzz field_selector_fuzz json_patch_fuzz strategic_merge_fuzz
         offline_apply_fuzz journal_entry_fuzz kubeconfig_fuzz protobuf_wire_fuzz
         certificate_objects_fuzz)
for t in "${targets[@]}"; do rm -rf "${out:?}/$t"; mkdir -p "$out/$t"; done

# seed TARGET: one seed from stdin, named by its SHA-1 as libFuzzer names corpus files.
seed() {
  local tmp
  tmp=$(mktemp "$out/$1/.seed.XXXXXX")
  cat > "$tmp"
  mv "$tmp" "$out/$1/$(sha1sum < "$tmp" | cut -c1-40)"
}
# parts TARGET PART...: one seed of the parts joined by NUL bytes (the targets' separator).
parts() {
  local t=$1 first=1
  shift
  { for p in "$@"; do [ $first -eq 1 ] || printf '\0'; first=0; printf '%s' "$p"; done; } | seed "$t"
}
# lines FILE: each non-empty line of FILE (a watch stream) as its own seed of json_parse_fuzz.
lines() { while IFS= read -r line; do [ -n "$line" ] && printf '%s' "$line" | seed json_parse_fuzz; done < "$1"; }

# JSON documents: every body and JSON capture, every watch event, the test objects.
for f in "$fx"/*.body "$fx"/*.json "$patches"/*.json "$root"/test/testdata/fake_apiserver/*.json; do
  seed json_parse_fuzz < "$f"
done
for f in "$fx"/*.stream; do
  case $f in *protobuf*) continue ;; esac
  lines "$f"
  seed watch_framer_fuzz < "$f"
done
# Lists (and, as near misses, single objects and discovery documents).
for f in "$fx"/*list*.body "$fx"/endpointslices-*.json "$fx"/node-get.body "$fx"/api*.body \
         "$fx"/status-404.body; do
  seed list_framer_fuzz < "$f"
done
printf '{"kind":"PodList","items":null}' | seed list_framer_fuzz
printf '{"type":"ADDED","object":{"kind":"Pod"}}\n{"type":"BOOKMARK","object":{}}\n' | seed watch_framer_fuzz

# gzip: what kube-apiserver sends a Go client, a tiny member, a cut one.
for f in "$fx"/pods-list-node.body "$fx"/api-v1.body "$fx"/pods-watch.stream; do
  gzip -c -n -6 "$f" | seed gzip_fuzz
done
printf '{}' | gzip -c -n -1 | seed gzip_fuzz
gzip -c -n "$fx"/node-get.body | head -c 200 | seed gzip_fuzz

# Requests: method, target and User-Agent, as the clients of an edge node send them.
ua_kubelet='kubelet/v1.32.4 (linux/amd64) kubernetes/abc'
requests=(
  "GET|/api/v1/pods?fieldSelector=spec.nodeName%3Dedge-1&limit=500&resourceVersion=0|$ua_kubelet"
  "GET|/api/v1/pods?allowWatchBookmarks=true&fieldSelector=spec.nodeName%3Dedge-1&resourceVersion=229&timeout=7m54s&timeoutSeconds=474&watch=true|$ua_kubelet"
  "GET|/apis/discovery.k8s.io/v1/endpointslices?labelSelector=%21service.kubernetes.io%2Fheadless%2C%21service.kubernetes.io%2Fservice-proxy-name&limit=500|kube-proxy/v1.32.4 (linux/amd64) kubernetes/abc"
  "PATCH|/api/v1/namespaces/default/pods/web-0/status|$ua_kubelet"
  "PUT|/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-1?timeout=10s|$ua_kubelet"
  "GET|/api/v1/namespaces/default/pods/web-0/log?follow=true&container=web|kubectl/v1.32.4"
  "POST|/api/v1/namespaces/default/pods/web-0/exec?command=sh&stdin=true&tty=true|kubectl/v1.32.4"
  "GET|/apis/apps.openyurt.io/v1beta1/nodepools/pool-a|yurthub/v1.4"
  "DELETE|/api/v1/namespaces/kube-system/configmaps?labelSelector=a%20in%20(b,c)|coredns/1.11"
  "GET|/healthz|curl/8.0"
)
for r in "${requests[@]}"; do
  IFS='|' read -r method target agent <<< "$r"
  parts request_info_fuzz "$method" "$target" "$agent"
  printf '%s %s HTTP/1.1\r\nHost: 127.0.0.1:10261\r\nUser-Agent: %s\r\nAccept: application/json\r\n\r\n' \
    "$method" "$target" "$agent" | seed http_request_fuzz
done
body="$(cat "$fx"/pod-status-smp.request.json)"
printf 'PATCH /api/v1/namespaces/default/pods/web-0/status HTTP/1.1\r\nHost: 127.0.0.1:10261\r\nUser-Agent: %s\r\nContent-Type: application/strategic-merge-patch+json\r\nContent-Length: %d\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n%s' \
  "$ua_kubelet" "${#body}" "$body" | seed http_request_fuzz
printf 'PUT /api/v1/namespaces/default/configmaps/c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTE: trailers\r\nConnection: TE, close\r\n\r\n5\r\n{"a":\r\n2\r\n1}\r\n0\r\n\r\n' \
  | seed http_request_fuzz
printf 'POST /api/v1/namespaces/default/pods/web-0/exec?command=sh HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\nAuthorization: Bearer abc\r\n\r\n' \
  | seed http_request_fuzz
printf 'GET /version HTTP/1.0\r\nProxy-Connection: keep-alive\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n' \
  | seed http_request_fuzz
# A Connection header naming the body's framing (request smuggling, fixed in net/http_io.cc).
printf 'PATCH /api/v1/namespaces/default/pods/web-0 HTTP/1.1\r\nHost: h\r\nContent-Length: 51\r\nConnection: Content-Length\r\n\r\nGET /api/v1/secrets HTTP/1.1\r\nHost: apiserver\r\n\r\n' \
  | seed http_request_fuzz
printf 'POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nConnection: transfer-encoding\r\n\r\n5\r\nhello\r\n0\r\n\r\n' \
  | seed http_request_fuzz
# Two Transfer-Encoding headers, the first not chunked (the message's chunked() reads only the
# first; the forwarder frames from the parser, which reads the last), and a Content-Length with
# leading zeros over Beast's default body limit (both once failed the target's own oracle).
printf 'POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n' \
  | seed http_request_fuzz
printf 'PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: 0002000000\r\nConnection: Cth\r\n\r\nab' \
  | seed http_request_fuzz

# kubelet's protobuf bodies (encoded by protoc from k8s.io/api's .proto files) and their JSON.
for f in "$root"/test/testdata/protobuf/*.pb "$root"/test/testdata/protobuf/*.json; do
  seed protobuf_wire_fuzz < "$f"
done

# Selectors, a second selector, and labels or an object to match.
labels='{"app":"web","tier":"frontend","version":"3"}'
for s in 'app=web' 'app==web,tier!=backend' 'app in (web,db),!canary' 'tier notin (a)' 'version>2,version<5' \
         'example.com/name=x-y_z.1' 'app' 'a in ()'; do
  parts label_selector_fuzz "$s" 'app=web,tier=frontend' "$labels"
done
pod="$(head -c 4000 "$fx"/node-get.body)"
for s in 'spec.nodeName=edge-1' 'metadata.name=web-0,metadata.namespace!=kube-system' \
         'status.phase!=Succeeded,status.phase!=Failed' 'a\,b=c\=d' 'metadata.name==edge-node-1' ''; do
  parts field_selector_fuzz "$s" 'metadata.name=edge-node-1' "$pod"
done

# Patches: JSON patch, merge patch and the diff between two documents; kubelet's strategic merge
# patches on the objects they were captured against; offline writes of each kind.
node="$(cat "$fx"/node-get.body)"
parts json_patch_fuzz "$node" '[{"op":"add","path":"/metadata/labels/x","value":"y"},{"op":"copy","from":"/metadata/labels","path":"/metadata/annotations"},{"op":"test","path":"/kind","value":"Node"},{"op":"move","from":"/metadata/labels/x","path":"/spec/x"},{"op":"remove","path":"/spec/x"},{"op":"replace","path":"/metadata/name","value":"n"}]' '{"kind":"Node","metadata":{"name":"n"}}'
parts json_patch_fuzz '{"a":{"b":[1,2,{"c":null}]}}' '{"a":{"b":null,"d":[1]},"e":"f"}' '{"a":{"d":2.5}}'
parts strategic_merge_fuzz "$(cat "$fx"/pod-status-smp.response.body)" "$(cat "$fx"/pod-status-smp.request.json)"
parts strategic_merge_fuzz "$node" "$(cat "$fx"/node-status-smp.request.json)"
parts strategic_merge_fuzz '{"kind":"Pod","metadata":{"finalizers":["a"]},"spec":{"containers":[{"name":"a","env":[{"name":"X","value":"1"}]}]}}' \
  '{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]},"spec":{"containers":[{"name":"a","env":[{"name":"X","$patch":"delete"}]},{"name":"b"}],"$retainKeys":["containers"]}}'
if command -v python3 >/dev/null; then
  # The patch test cases: original, patch (and modified) of each, NUL-separated.
  python3 - "$patches" "$out" <<'PY'
import json, os, sys
patches, out = sys.argv[1], sys.argv[2]
def write(target, name, *parts):
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(b"\0".join(json.dumps(p, separators=(",", ":")).encode() for p in parts))
for i, case in enumerate(json.load(open(os.path.join(patches, "strategic_merge.json")))):
    if "original" in case and "patch" in case:
        write("strategic_merge_fuzz", f"case-{i}", case["original"], case["patch"])
for i, case in enumerate(json.load(open(os.path.join(patches, "merge_patch_diff.json")))):
    if "original" in case and "modified" in case:
        write("json_patch_fuzz", f"diff-{i}", case["original"], {}, case["modified"])
PY
fi
pod_smp="$(cat "$fx"/pod-status-smp.response.body)"
{ printf '\0%s\0' "$pod_smp"; cat "$fx"/pod-status-smp.request.json; } | seed offline_apply_fuzz
{ printf '\1%s\0{"metadata":{"labels":{"x":"y","app":null}}}' "$pod_smp"; } | seed offline_apply_fuzz
{ printf '\2%s\0[{"op":"replace","path":"/spec/nodeName","value":"n2"},{"op":"copy","from":"/metadata","path":"/spec/m"}]' "$pod_smp"; } | seed offline_apply_fuzz
{ printf '\3%s\0' "$node"; cat "$fx"/node-status-smp.request.json; } | seed offline_apply_fuzz
{ printf '\5%s\0%s' "$pod_smp" "$pod_smp"; } | seed offline_apply_fuzz

# Journal entries as encode_journal_entry writes them.
printf '%s' '{"v":1,"created":1767225600,"baseResourceVersion":230,"method":"PATCH","target":"/api/v1/namespaces/default/pods/web-0/status","contentType":"application/strategic-merge-patch+json","userAgent":"kubelet/v1.32.4","component":"kubelet","authorization":"","object":"/v1/pods/default/web-0","base":"","body":"{\"status\":{\"phase\":\"Running\"}}"}' \
  | seed journal_entry_fuzz
printf '%s' '{"v":1,"created":-1,"baseResourceVersion":18446744073709551615,"method":"PUT","target":"/t?x=\u0000","contentType":"application/json","userAgent":"\u00e9","component":"","authorization":"Bearer x","object":"o","base":"{}","body":""}' \
  | seed journal_entry_fuzz

# Kubeconfigs: kubelet's (no identity: refused), and ones with inline or file credentials.
seed kubeconfig_fuzz < "$root/docs/kubelet-kubeconfig.yaml"
ca="$(printf -- '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n' | base64 -w0)"
key="$(printf -- '-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIA\n-----END EC PRIVATE KEY-----\n' | base64 -w0)"
cat <<YAML | seed kubeconfig_fuzz
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: $ca, tls-server-name: kubernetes}
contexts:
- {name: x, context: {cluster: c, user: u}}
current-context: x
users:
- name: u
  user: {client-certificate-data: $ca, client-key-data: $key}
YAML
cat <<YAML | seed kubeconfig_fuzz
apiVersion: v1
clusters: [{name: c, cluster: {server: "https://h", insecure-skip-tls-verify: true}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: default}}]
current-context: x
users: [{name: u, user: {token: "abc.def", tokenFile: token}}]
YAML
# certificate_objects_fuzz: a CSR answer, cluster-info, a detached JWS, its content, a token, the
# default/kubernetes Service.
jws='eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9..BBvDJAkf27s1H4CVEm8EIMiBR80uZHSN_IM4Siy8zsU'
parts certificate_objects_fuzz \
  '{"kind":"CertificateSigningRequest","metadata":{"name":"csr-x"},"status":{"conditions":[{"type":"Approved","status":"True"}],"certificate":"LS0tLS1CRUdJTg=="}}' \
  '{"kind":"ConfigMap","data":{"kubeconfig":"apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1BPT0KLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=\n    server: https://10.0.0.1:6443\n  name: \"\"\n","jws-kubeconfig-abcdef":"'"$jws"'"}}' \
  "$jws" $'apiVersion: v1\nclusters: []\n' 'abcdef.0123456789abcdef' \
  '{"kind":"Service","metadata":{"name":"kubernetes","namespace":"default"},"spec":{"clusterIP":"10.96.0.1","clusterIPs":["10.96.0.1","fd00::1"],"type":"ClusterIP"}}'

echo "seed_corpus: $(find "$out" -type f | wc -l) seeds in $out"

