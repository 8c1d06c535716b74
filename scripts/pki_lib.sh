# Shared by gen-certs.sh and gen-node-certs.sh, sourced in the PKI directory (ca.crt, ca.key).
# key FILE: a new P-256 key.
key() { openssl ecparam -name prime256v1 -genkey -noout -out "$1" 2>/dev/null; }

# sign NAME SUBJECT [SAN]: NAME.crt/.key, a leaf certificate signed by the CA: a serving one
# (serverAuth) when SAN is given, else a client one.
sign() {
  local name=$1 subject=$2 san=${3:-}
  key "$name.key"
  openssl req -new -key "$name.key" -subj "$subject" -out "$name.csr" 2>/dev/null
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [ -n "$san" ]; then
      echo "extendedKeyUsage=serverAuth"
      echo "subjectAltName=$san"
    else
      echo "extendedKeyUsage=clientAuth"
    fi
  } > "$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 365 \
    -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}
