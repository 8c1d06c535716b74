#!/usr/bin/env bash
# Certificates of one more node, signed by the CA gen-certs.sh made in DIR, in DIR/NODE:
#   hub-client.crt/.key   the node's hub identity: CN=system:node:NODE, O=system:nodes
#   hub-server.crt/.key   with IP: a serving certificate naming IP (the multiplexer port's)
#   hub.kubeconfig        DIR/hub.kubeconfig with this node's client certificate
# For the tests and benchmarks that run several hubs of a pool against one apiserver.
# Usage: gen-node-certs.sh DIR NODE [IP]
set -euo pipefail
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=$(cd "${1:?usage: gen-node-certs.sh DIR NODE [IP]}" && pwd)
node=${2:?usage: gen-node-certs.sh DIR NODE [IP]}
ip=${3:-}
cd "$dir"
source "$scripts/pki_lib.sh"
mkdir -p "$node"
sign "$node/hub-client" "/CN=system:node:$node/O=system:nodes/O=openyurt:yurthub"
[ -z "$ip" ] || sign "$node/hub-server" "/CN=system:node:$node/O=system:nodes" "IP:$ip"
sed -e "s#client-certificate: .*#client-certificate: $dir/$node/hub-client.crt#" \
    -e "s#client-key: .*#client-key: $dir/$node/hub-client.key#" \
    -e "s#certificate-authority: .*#certificate-authority: $dir/ca.crt#" \
    hub.kubeconfig >"$node/hub.kubeconfig"
chmod 600 "$node"/*.key
