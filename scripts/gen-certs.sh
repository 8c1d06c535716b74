#!/usr/bin/env bash
# Generates a throwaway PKI for the demo, the integration tests and the benchmarks, in DIR:
#   ca.crt/ca.key                  cluster CA
#   apiserver.crt/.key             the (fake) apiserver's serving cert: 127.0.0.1, ::1, localhost
#   apiserver-cn-only.crt/.key     a serving cert naming localhost in its CN only, no SAN: a client
#                                  must refuse it (the tests check the hub never falls back to CN)
#   hub-client.crt/.key            the hub's identity: CN=system:node:NODE, O=system:nodes,openyurt:yurthub
#   hub-server.crt/.key            the hub's HTTPS proxy port (10268): 127.0.0.1, 169.254.2.1
#   admin.crt/.key                 a kubectl user, CN=admin, O=system:masters
#   tokens.csv                     static bearer tokens for the fake apiserver
#   hub.kubeconfig                 the hub's kubeconfig (--kubeconfig), SERVER as its cluster server
# Usage: gen-certs.sh DIR [NODE] [SERVER]   (more nodes of the same CA: gen-node-certs.sh)
set -euo pipefail
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${1:?usage: gen-certs.sh DIR [NODE] [SERVER]}
node=${2:-edge-node-1}
server=${3:-https://127.0.0.1:6443}
mkdir -p "$dir"
cd "$dir"

source "$scripts/pki_lib.sh"

key ca.key
openssl req -x509 -new -key ca.key -subj "/CN=yurthub-test-ca" -days 365 -out ca.crt \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
sign apiserver "/CN=kube-apiserver" "IP:127.0.0.1,IP:::1,DNS:localhost,DNS:kubernetes.default.svc"
sign hub-server "/CN=system:node:$node/O=system:nodes" "IP:127.0.0.1,IP:169.254.2.1,DNS:localhost"
key apiserver-cn-only.key
openssl req -new -key apiserver-cn-only.key -subj "/CN=localhost" -out apiserver-cn-only.csr 2>/dev/null
printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' \
  > apiserver-cn-only.ext
openssl x509 -req -in apiserver-cn-only.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 365 \
  -extfile apiserver-cn-only.ext -out apiserver-cn-only.crt 2>/dev/null
rm -f apiserver-cn-only.csr apiserver-cn-only.ext
sign hub-client "/CN=system:node:$node/O=system:nodes/O=openyurt:yurthub"
sign admin "/CN=admin/O=system:masters"

cat > tokens.csv <<TOKENS
admin-token-0123456789,admin,uid-admin,"system:masters"
pod-token-0123456789,system:serviceaccount:default:web,uid-web,"system:serviceaccounts,system:serviceaccounts:default"
TOKENS

cat > hub.kubeconfig <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: cloud
  cluster:
    server: $server
    certificate-authority: ca.crt
users:
- name: hub
  user:
    client-certificate: hub-client.crt
    client-key: hub-client.key
contexts:
- name: hub
  context:
    cluster: cloud
    user: hub
current-context: hub
KUBECONFIG
chmod 600 ./*.key
