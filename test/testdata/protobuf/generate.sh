#!/usr/bin/env bash
# Regenerates the Kubernetes protobuf request-body fixtures in this directory
# from proto/ and the NAME.txtpb files, using protoc (Debian: protobuf-compiler).
# protoc is needed only to run this script, not to build or test the hub.
#
#   ./generate.sh           rewrite every NAME.pb, then verify them
#   ./generate.sh --check   regenerate into a temp dir and fail if any committed
#                           NAME.pb differs (nothing is written here)
#
# Each NAME.pb = "k8s\x00" + protoc --encode of NAME.txtpb as the envelope message
# named in the table below. Every file is then verified: the magic prefix is
# present, `protoc --decode` of the rest against the envelope succeeds, and
# re-encoding the decoded text reproduces the very same bytes (so no bytes were
# skipped as unknown fields). Any failure aborts with a non-zero exit status.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

# fixture name -> envelope message (proto/testdata/envelope.proto)
fixtures=(
  "lease-update:LeaseEnvelope"
  "lease-create:LeaseEnvelope"
  "token-request:TokenRequestEnvelope"
  "token-request-other-audience:TokenRequestEnvelope"
  "node-create:NodeEnvelope"
  "csinode-create:CSINodeEnvelope"
  "csinode-update:CSINodeEnvelope"
  "event-create:EventEnvelope"
)

check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

command -v protoc >/dev/null 2>&1 || {
  echo "error: protoc not found (apt-get install protobuf-compiler)" >&2
  exit 1
}

proto_args=(-I proto proto/testdata/envelope.proto)
pkg="testdata.envelope"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

encode() {  # encode <message> <in.txtpb> <out.bin>
  # --deterministic_output: map entries sorted by key, as gogo-generated Go code
  # (sortkeys) writes them.
  protoc "${proto_args[@]}" --deterministic_output --encode="$pkg.$1" <"$2" >"$3" \
    || fail "protoc --encode=$pkg.$1 < $2"
}

verify() {  # verify <message> <file.pb>
  local msg="$1" pb="$2" base
  base="$tmp/$(basename "$pb" .pb)"
  [[ "$(head -c 4 "$pb" | od -An -tx1 | tr -d ' \n')" == "6b387300" ]] \
    || fail "$pb: does not start with the magic bytes k8s\\x00"
  tail -c +5 "$pb" >"$base.body"
  protoc "${proto_args[@]}" --decode="$pkg.$msg" <"$base.body" >"$base.decoded" \
    || fail "$pb: protoc --decode=$pkg.$msg failed"
  [[ -s "$base.decoded" ]] || fail "$pb: decoded to nothing"
  encode "$msg" "$base.decoded" "$base.reencoded"
  cmp -s "$base.body" "$base.reencoded" \
    || fail "$pb: decode/re-encode round trip differs (unknown or malformed fields?)"
}

for entry in "${fixtures[@]}"; do
  name="${entry%%:*}"
  msg="${entry#*:}"
  [[ -f "$name.txtpb" ]] || fail "missing $name.txtpb"
  encode "$msg" "$name.txtpb" "$tmp/$name.body.new"
  { printf 'k8s\000'; cat "$tmp/$name.body.new"; } >"$tmp/$name.pb"
  verify "$msg" "$tmp/$name.pb"
  if (( check )); then
    [[ -f "$name.pb" ]] || fail "$name.pb is missing (run ./generate.sh)"
    cmp -s "$tmp/$name.pb" "$name.pb" \
      || fail "$name.pb is stale: it differs from what $name.txtpb encodes to (run ./generate.sh)"
    verify "$msg" "$name.pb"
    echo "ok   $name.pb ($(wc -c <"$name.pb") bytes, $pkg.$msg)"
  else
    cp "$tmp/$name.pb" "$name.pb"
    verify "$msg" "$name.pb"
    echo "wrote $name.pb ($(wc -c <"$name.pb") bytes, $pkg.$msg)"
  fi
done
