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
         certificate_objects_fuzz rtnetlink_fuzz list_record_fuzz continue_token_fuzz
         yurt_hub_cfg_fuzz upstream_response_fuzz service_account_keys_fuzz ota_pod_fuzz
         autonomy_condition_fuzz admission_review_fuzz pool_fuzz object_meta_fuzz
         upstream_body_fuzz)
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
# object_meta_fuzz: single objects as the apiserver writes them, and metadata in odd shapes.
for f in "$fx"/node-get.body "$fx"/nodepool-get.body "$fx"/lease-create.body \
         "$fx"/pod-status-smp.response.body; do
  seed object_meta_fuzz < "$f"
done
printf '{"metadata":{"name":"a\\u0062","namespace":"","resourceVersion":"18446744073709551615"}}' |
  seed object_meta_fuzz
printf '{"kind":"Pod","metadata":{"labels":{"name":"x"},"name":"web-0","resourceVersion":"12a"}}' |
  seed object_meta_fuzz
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

# Binary seeds: `le`/`be` N V write V as N bytes, little- or big-endian; `zeros` N writes N zero
# bytes (bash variables cannot hold NUL bytes, so binary seeds are written to pipes).
le() { local i; for ((i = 0; i < $1; i++)); do printf "\\x$(printf %02x $((($2 >> (8 * i)) & 255)))"; done; }
be() { local i; for ((i = $1 - 1; i >= 0; i--)); do printf "\\x$(printf %02x $((($2 >> (8 * i)) & 255)))"; done; }
zeros() { head -c "$1" /dev/zero; }

# rtnetlink_fuzz: the kernel's answers (x86 and arm64 are little-endian) to the hub's requests,
# laid out as net/rtnetlink.cc's NetlinkRequest lays out a message: a header, the fixed part,
# attributes padded to 4 bytes. The target reads them as answers to request 1 asking for link 2,
# hub-dummy0, 169.254.2.1 (or fd00::1), and the peer at port 45678 of the admin port 10267.
# nl_attr TYPE < data: an attribute. nl_msg TYPE FLAGS < payload: a message of request 1.
nl_attr() {
  local tmp n
  tmp=$(mktemp); cat > "$tmp"; n=$(wc -c < "$tmp")
  le 2 $((n + 4)); le 2 "$1"; cat "$tmp"; zeros $(((4 - n % 4) % 4)); rm -f "$tmp"
}
nl_msg() {
  local tmp n
  tmp=$(mktemp); cat > "$tmp"; n=$(wc -c < "$tmp")
  le 4 $((n + 16)); le 2 "$1"; le 2 "$2"; le 4 1; le 4 4242; cat "$tmp"; zeros $(((4 - n % 4) % 4))
  rm -f "$tmp"
}
nl_ack() { { le 4 $((-$1 & 0xffffffff)); le 4 16; le 2 "$2"; le 2 5; le 4 1; le 4 0; } | nl_msg 2 256; }
nl_done() { le 4 $((-$1 & 0xffffffff)) | nl_msg 3 2; }
# nl_link INDEX FLAGS NAME KIND: RTM_NEWLINK (16), as `ip -d link show` reads it.
nl_link() {
  { printf '\0\0'; le 2 1; le 4 "$1"; le 4 "$2"; le 4 0
    printf '%s\0' "$3" | nl_attr 3         # IFLA_IFNAME
    le 4 1500 | nl_attr 4                  # IFLA_MTU
    printf '\x06' | nl_attr 16             # IFLA_OPERSTATE: IF_OPER_UP
    if [ -n "$4" ]; then printf '%s\0' "$4" | nl_attr 1 | nl_attr 18; fi  # IFLA_LINKINFO/KIND
  } | nl_msg 16 0
}
# nl_addr FAMILY PREFIX INDEX ADDRESS-BYTES...: RTM_NEWADDR (20) of a dump (NLM_F_MULTI).
nl_addr() {
  local family=$1 prefix=$2 index=$3
  shift 3
  { printf "\\x$(printf %02x "$family")\\x$(printf %02x "$prefix")\\x80\\x00"; le 4 "$index"
    printf "$(printf '\\x%02x' "$@")" | nl_attr 1  # IFA_ADDRESS
    if [ "$family" = 2 ]; then printf "$(printf '\\x%02x' "$@")" | nl_attr 2; fi  # IFA_LOCAL
    printf 'hub-dummy0\0' | nl_attr 3              # IFA_LABEL
    le 4 128 | nl_attr 8                           # IFA_FLAGS: IFA_F_PERMANENT
  } | nl_msg 20 2
}
# nl_diag SPORT DPORT UID: SOCK_DIAG_BY_FAMILY (20): an inet_diag_msg of a loopback connection.
nl_diag() {
  { printf '\x02\x01\x00\x00'; be 2 "$1"; be 2 "$2"
    printf '\x7f\x00\x00\x01'; zeros 12; printf '\x7f\x00\x00\x01'; zeros 12
    le 4 0; zeros 8; le 4 0; le 4 0; le 4 0; le 4 "$3"; le 4 81234
  } | nl_msg 20 0
}
nl_link 2 $((0x100c3)) hub-dummy0 dummy | seed rtnetlink_fuzz
{ nl_link 2 $((0x100c3)) hub-dummy0 dummy; nl_ack 0 18; } | seed rtnetlink_fuzz
{ nl_link 2 $((0x82)) hub-dummy0 dummy; nl_ack 0 18; } | seed rtnetlink_fuzz  # down
{ nl_link 2 $((0x11043)) hub-dummy0 veth; nl_ack 0 18; } | seed rtnetlink_fuzz  # another kind
{ nl_link 1 $((0x10049)) lo ''; nl_ack 0 18; } | seed rtnetlink_fuzz
nl_ack 19 18 | seed rtnetlink_fuzz  # ENODEV: no such link
nl_ack 17 16 | seed rtnetlink_fuzz  # EEXIST on RTM_NEWLINK
nl_ack 1 16 | seed rtnetlink_fuzz   # EPERM: no CAP_NET_ADMIN
nl_ack 2147483648 18 | seed rtnetlink_fuzz  # INT_MIN, no errno (negating it was UB, now refused)
{ nl_addr 2 8 1 127 0 0 1; nl_addr 2 32 2 169 254 2 1; nl_done 0; } | seed rtnetlink_fuzz
{ nl_addr 10 128 2 253 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1; nl_done 0; } | seed rtnetlink_fuzz
{ nl_addr 2 32 2 169 254 2 1; } | seed rtnetlink_fuzz  # more datagrams follow
nl_done 16 | seed rtnetlink_fuzz  # a dump that failed part way (EBUSY)
{ nl_diag 45678 10267 1000; nl_ack 0 20; } | seed rtnetlink_fuzz
{ nl_diag 45678 10267 0; nl_done 0; } | seed rtnetlink_fuzz

# list_record_fuzz: list records as encode_list_record writes them (version, flags, set and
# staging ids, resourceVersion, synced time, kind, apiVersion) and identity keys.
list_record() {
  printf '\x01'; printf "\\x$(printf %02x "$1")"; be 4 "$2"; be 4 "$3"; be 8 "$4"; be 8 "$5"
  be 4 ${#6}; printf '%s' "$6"; be 4 ${#7}; printf '%s' "$7"
}
list_record 1 7 0 229 1767225600 PodList v1 | seed list_record_fuzz
list_record 0 12 13 41 1767225600 EndpointSliceList discovery.k8s.io/v1 | seed list_record_fuzz
list_record 3 2 0 18446744073709551615 -1 NodePoolList apps.openyurt.io/v1beta2 | seed list_record_fuzz
list_record 0 0 0 0 0 '' '' | seed list_record_fuzz
head -c 30 < <(list_record 1 7 0 229 1767225600 PodList v1) | seed list_record_fuzz  # torn
printf 'kubelet\0\0v1\0pods\0\0\0spec.nodeName=edge-1' | seed list_record_fuzz
printf 'kubelet\0\0v1\0pods\0\0\0\1get' | seed list_record_fuzz
printf '\2sa:kube-system/coredns\0coredns\0discovery.k8s.io\0v1\0endpointslices\0\0!service.kubernetes.io/headless\0' \
  | seed list_record_fuzz

# continue_token_fuzz: the hub's own offline tokens and the apiserver's (from the captured
# paged list), as sent (first byte 0), and the JSON inside a token (first byte 1).
b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
for point in '{"s":42,"n":"kube-system","m":"coredns-abc"}' '{"s":7,"n":"","m":"edge-1"}'; do
  printf '\0yh1.%s' "$(printf '%s' "$point" | b64url)" | seed continue_token_fuzz
  printf '\1%s' "$point" | seed continue_token_fuzz
done
printf '\1%s' '{"s":4294967295,"n":"default","m":"web-0\u0000x","s":1}' | seed continue_token_fuzz
apiserver_continue=$(sed -n 's/.*"continue":"\([^"]*\)".*/\1/p' "$fx"/pods-list-page1.body | head -1)
printf '\0%s' "$apiserver_continue" | seed continue_token_fuzz
printf '\0yh1.eyJzIjo0Mn0%%3D' | seed continue_token_fuzz

# yurt_hub_cfg_fuzz: the ConfigMap as OpenYurt's chart creates it and as operators edit it
# (docs/reference/yurthub.md §2.3, docs/filters.md), as the apiserver returns it.
cfg() {
  printf '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"yurt-hub-cfg","namespace":"kube-system","uid":"1f4c3a9e-7d2b-4c51-9a0e-5b8f2d6c7e10","resourceVersion":"%s","creationTimestamp":"2026-11-21T13:40:02Z","labels":{"openyurt.io/configmap-name":"yurt-hub-cfg"}},"data":%s}' "$1" "$2"
}
cfg 812 '{"cache_agents":"","discardcloudservice":"","masterservice":"","servicetopology":""}' \
  | seed yurt_hub_cfg_fuzz
cfg 813 '{"cache_agents":"foo, bar","servicetopology":"cilium-agent"}' | seed yurt_hub_cfg_fuzz
cfg 814 '{"cache_agents":"*","filter_servicetopology":"Cilium-Agent/v1.16.3, cilium ,,","masterservice":"kubectl/v1.32"}' \
  | seed yurt_hub_cfg_fuzz
{ cfg 815 '{"cache_agents":"a\u0000b, c","inclusterconfig":"yurthub, \t x"}'; printf '\0'
  cfg 3 '{"cache_agents":"ops-tool","nodeportisolation":1,"serviceenvupdater":null}'; } | seed yurt_hub_cfg_fuzz
cfg 816 '[]' | seed yurt_hub_cfg_fuzz

# upstream_response_fuzz: the apiserver's response heads (the captures), each with the start of
# its body, behind the byte that picks the exchange (bit 0 HEAD, 1 cache, 2 filter, 3 HTTP/1.0
# client, 4 client keep-alive, 5 long-running).
for f in "$fx"/*.headers; do
  body="${f%.headers}.body"
  for exchange in '\x12' '\x16' '\x18' '\x00'; do
    { printf "$exchange"; cat "$f"; if [ -f "$body" ]; then head -c 200 "$body"; fi; } \
      | seed upstream_response_fuzz
  done
done
{ printf '\x32'; head -c 2000 "$fx"/pods-watch.raw-http1; } | seed upstream_response_fuzz
{ printf '\x13'; cat "$fx"/node-get.headers; } | seed upstream_response_fuzz
printf '\x12HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 20\r\n\r\n' \
  | seed upstream_response_fuzz
printf '\x10HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n' \
  | seed upstream_response_fuzz
printf '\x10HTTP/1.1 304 Not Modified\r\nContent-Length: 1234\r\n\r\n' | seed upstream_response_fuzz
printf '\x12HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive, X-Trace\r\nKeep-Alive: timeout=5\r\nX-Trace: 1\r\n\r\n{}' \
  | seed upstream_response_fuzz
printf '\x16HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: 5, 5\r\nTrailer: X-A\r\n\r\nerror' \
  | seed upstream_response_fuzz
# upstream_body_fuzz: whole responses (head and body) behind the byte that picks the reads: the
# captured watch as the apiserver framed it, and each way a body may be delimited.
{ printf '\x07'; head -c 6000 "$fx"/pods-watch.raw-http1; } | seed upstream_body_fuzz
printf '\x2aHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4;x=y\r\ndefg\r\n0\r\nX-T: 1\r\n\r\n' \
  | seed upstream_body_fuzz
printf '\x05HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello worldHTTP/1.1' | seed upstream_body_fuzz
printf '\x11HTTP/1.0 200 OK\r\n\r\n{"kind":"Status"}' | seed upstream_body_fuzz
# What the target found (fixed): "020", read as 20, written to the client as a two-digit status.
printf '\x12HTTP/1.1 020 OK\r\nContent-Length: 2\r\n\r\n{}' | seed upstream_response_fuzz
# Transfer-Encoding lines the parser reads as chunked and Beast's message does not (a second
# line, or a first one with a token it cannot read), relayed as sent, the body sent unchunked.
printf '\x12HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n' \
  | seed upstream_response_fuzz
printf '\x16HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: a: b, chunked\r\n\r\n' \
  | seed upstream_response_fuzz

echo "seed_corpus: $(find "$out" -type f | wc -l) seeds in $out"

# service_account_keys_fuzz: the issuer discovery documents as kube-apiserver v1.26 serves them,
# with a real RSA key, and a token signed with it (RS256) as the apiserver signs them.
b64url() { basenc --base64url -w0 | tr -d '='; }
sa_dir=$(mktemp -d)
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$sa_dir/key.pem" 2>/dev/null
modulus=$(openssl rsa -in "$sa_dir/key.pem" -noout -modulus | cut -d= -f2 | perl -ne 'chomp; print pack("H*", $_)' | b64url)
issuer=https://kubernetes.default.svc.cluster.local
configuration='{"issuer":"'$issuer'","jwks_uri":"'$issuer'/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"]}'
jwks='{"keys":[{"use":"sig","kty":"RSA","kid":"k1","alg":"RS256","n":"'$modulus'","e":"AQAB"}]}'
header=$(printf '%s' '{"alg":"RS256","kid":"k1"}' | b64url)
claims=$(printf '%s' '{"aud":["'$issuer'"],"exp":1900000000,"iat":1799999000,"iss":"'$issuer'","kubernetes.io":{"namespace":"kube-system","pod":{"name":"kube-proxy-x","uid":"p-1"},"serviceaccount":{"name":"kube-proxy","uid":"s-1"}},"nbf":1799999000,"sub":"system:serviceaccount:kube-system:kube-proxy"}' | b64url)
signature=$(printf '%s' "$header.$claims" | openssl dgst -sha256 -sign "$sa_dir/key.pem" -binary | b64url)
rm -rf "$sa_dir"
parts service_account_keys_fuzz "$configuration" "$jwks" "$header.$claims.$signature"
parts service_account_keys_fuzz "$configuration" '{"keys":[{"use":"sig","kty":"EC","kid":"e","crv":"P-256","alg":"ES256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}]}' \
  "$header.$claims.AAAA"

# ota_pod_fuzz: pods as the OTA integration test seeds them (ota-objects.json), behind an upgrade
# or image-pull path and the node's name.
pod() {
  printf '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"%s","namespace":"kube-system","uid":"u1","ownerReferences":[{"apiVersion":"%s","kind":"%s","name":"agent","uid":"o1","controller":true}]},"spec":{"nodeName":"edge-node-1"},"status":{"conditions":[{"type":"PodNeedUpgrade","status":"True","message":"controllerrevision: 5d8f7c"}%s]}}' "$@"
}
ready=',{"type":"PodImageReady","status":"True","message":"controllerrevision: 5d8f7c","lastTransitionTime":"2026-01-01T00:00:00Z"}'
parts ota_pod_fuzz /openyurt.io/v1/namespaces/kube-system/pods/agent-upgrade/upgrade edge-node-1 \
  "$(pod agent-upgrade apps/v1 DaemonSet "$ready")"
parts ota_pod_fuzz /openyurt.io/v1/namespaces/kube-system/pods/agent-pull/imagepull edge-node-1 \
  "$(pod agent-pull apps/v1 DaemonSet '')"
parts ota_pod_fuzz /openyurt.io/v1/namespaces/kube-system/pods/edge-agent-edge-node-1/upgrade \
  edge-node-1 "$(pod edge-agent-edge-node-1 v1 Node '')"
parts ota_pod_fuzz /pods edge-node-1 '{}'

# autonomy_condition_fuzz: a state byte, then a Node with and without the annotations and an
# Autonomy condition (the first byte: cache state in bits 0-1, failures so far in bits 2-4).
node() {
  printf '{"kind":"Node","apiVersion":"v1","metadata":{"name":"edge-node-1","annotations":{%s},"labels":{%s}},"status":{"conditions":[{"type":"Ready","status":"True"}%s]}}' "$1" "$2" "$3"
}
autonomy=',{"type":"Autonomy","status":"True","reason":"autonomy enabled successfully","message":"m","lastHeartbeatTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z"}'
{ printf '\x00'; node '"node.beta.openyurt.io/autonomy":"true"' '' ''; } | seed autonomy_condition_fuzz
{ printf '\x0d'; node '"node.openyurt.io/autonomy-duration":"0"' '' "$autonomy"; } | seed autonomy_condition_fuzz
{ printf '\x02'; node '"apps.openyurt.io/binding":"true"' '"openyurt.io/is-edge-worker":"false"' "$autonomy"; } |
  seed autonomy_condition_fuzz

# admission_review_fuzz: the recorded AdmissionReviews of test/testdata/admission behind their
# path byte ("m": /mutate-pods, "v": /validate-nodes), and a review without an object.
for f in "$root"/test/testdata/admission/*.review.json; do
  case $(basename "$f") in node-*) path=v ;; *) path=m ;; esac
  { printf '%s' "$path"; cat "$f"; } | seed admission_review_fuzz
done
printf 'm{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"kind":"Pod"}}}' \
  | seed admission_review_fuzz

# pool_fuzz: a captured EndpointSlice list then watch events for the shared cache (0), continue
# tokens (1), the leader-hub ConfigMap and its resource list (2), access review answers (3).
for f in "$fx"/endpointslices-*.json; do
  { printf '\0'; cat "$f"; printf '\0{"type":"MODIFIED","object":{"kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1","metadata":{"name":"x","namespace":"default","resourceVersion":"999999"}}}'; } |
    seed pool_fuzz
done
printf '\0{"kind":"ServiceList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[{"metadata":{"name":"a","namespace":"d","resourceVersion":"5"}}]}\0{"type":"DELETED","object":{"metadata":{"name":"a","namespace":"d","resourceVersion":"11"}}}\0{"type":"ERROR","object":{"code":410}}' |
  seed pool_fuzz
printf '\1yp1.%s' "$(printf '%s' '{"rv":42,"k":"default/web"}' | b64url)" | seed pool_fuzz
printf '\2%s' '{"data":{"pool-scoped-metadata":"/v1/services,discovery.k8s.io/v1/endpointslices","leaders":"edge-1/10.0.0.1,bad","enable-leader-election":"true"}}' |
  seed pool_fuzz
printf '\3%s' '{"kind":"SelfSubjectAccessReview","status":{"allowed":true}}' | seed pool_fuzz
