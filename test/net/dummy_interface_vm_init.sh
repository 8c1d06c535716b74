#!/bin/bash
# /init of the VM that test/net/dummy_interface_vm_test.sh boots: PID 1 on a real Debian 12 kernel
# whose `dummy` link kind is a module (CONFIG_DUMMY=m) loaded on demand through modprobe. Runs the
# real yurthub with its dummy interface defaults and checks, reading the kernel's state with
# iproute2 (not with the hub's code): hub-dummy0 is of kind dummy, up, with 169.254.2.1/32; the
# proxy on 169.254.2.1:10261 answers 401 to a request without a bearer token, and so does the
# HTTPS port 10268, its certificate verified for 169.254.2.1 with the cluster CA; the hub re-creates
# the interface after `ip link del` (its 60 s period, waited for with a bound); SIGTERM deletes
# it. Then runs net_tests' DummyInterface cases, which use kind dummy when the kernel can make it.
# Every line the host checks starts with "VMTEST"; the last is "VMTEST RESULT PASS" or
# "VMTEST RESULT FAIL". Powers the VM off whatever happens.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# Not `set -e`: PID 1 exiting panics the kernel; every failure is reported and the VM powered off.
set -uo pipefail
failures=0
say() { echo "VMTEST $*"; }
check() {  # check WHAT CMD...: runs CMD, reports WHAT as ok or FAIL
  local what=$1
  shift
  if "$@"; then say "ok: $what"; else say "FAIL: $what"; failures=$((failures + 1)); fi
}
finish() {
  if [ "$failures" -eq 0 ]; then say "RESULT PASS"; else say "RESULT FAIL ($failures)"; fi
  sync
  echo o >/proc/sysrq-trigger  # power off now (no init system in this root)
  sleep 10                     # not reached; PID 1 must not exit before the power-off
}
trap finish EXIT

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
ip link set lo up
echo  # the firmware's last escape sequence has no newline
say "kernel $(uname -r) ($(cut -d' ' -f3- /proc/version)), /init started at uptime" \
  "$(cut -d' ' -f1 /proc/uptime) s"
say "modprobe is $(cat /proc/sys/kernel/modprobe), dummy module loaded before the hub:" \
  "$(grep -c '^dummy ' /proc/modules)"

# poll SECONDS CMD...: CMD until it succeeds, at most SECONDS (0.1 s steps).
poll() {
  local deadline=$(($(date +%s) + $1))
  shift
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}
# http_status HOST PORT: the status line of a GET / without credentials, over bash's /dev/tcp.
http_status() {
  local line
  exec 3<>"/dev/tcp/$1/$2" || return 1
  printf 'GET /api/v1/nodes HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n\r\n' "$1" "$2" >&3
  IFS= read -r -t 5 line <&3
  exec 3<&- 3>&-
  echo "${line%$'\r'}"
}
# interface_ok: hub-dummy0 exists, is of kind dummy, up, and has 169.254.2.1/32.
interface_ok() {
  local d
  d=$(ip -d addr show dev hub-dummy0 2>/dev/null) || return 1
  grep -Eq '^ +dummy( |$)' <<<"$d" && grep -q '[<,]UP[,>]' <<<"$d" &&
    grep -q 'inet 169.254.2.1/32 ' <<<"$d"
}
hub_log_has() { grep -q "$1" /tmp/hub.log; }

# The hub: its defaults for the dummy interface, an apiserver that refuses connections (edge mode
# starts with a kubeconfig and no apiserver), the HTTPS port with the certificate for 169.254.2.1.
pki=/yurthub/pki
/usr/bin/yurthub --server-addr=https://127.0.0.1:1 --node-name=edge-node-1 \
  --kubeconfig=$pki/hub.kubeconfig --tls-cert-file=$pki/hub-server.crt \
  --tls-private-key-file=$pki/hub-server.key --disk-cache-path=/tmp/cache \
  --proxy-port=10261 --proxy-secure-port=10268 --serve-port=10267 >/tmp/hub.log 2>&1 &
hub=$!
started=$(date +%s.%N)
if ! poll 20 hub_log_has 'proxy_dummy listening on'; then
  say "FAIL: the hub did not listen on the dummy interface within 20 s; its log:"
  sed 's/^/VMTEST hub: /' /tmp/hub.log
  failures=$((failures + 1))
  exit
fi
say "hub listening on the dummy interface $(awk -v s="$started" -v n="$(date +%s.%N)" \
  'BEGIN { printf "%.2f", n - s }') s after its start"
grep -E 'dummy|listening' /tmp/hub.log | sed 's/^/VMTEST hub: /'

# (a) the interface, as the kernel reports it
ip -d addr show dev hub-dummy0 | sed 's/^/VMTEST ip: /'
check "hub-dummy0 is a dummy link, UP, with 169.254.2.1/32" interface_ok
check "the dummy module was loaded on demand" grep -q '^dummy ' /proc/modules
grep '^dummy ' /proc/modules | sed 's/^/VMTEST modules: /'

# (b) the plain proxy on the dummy address: no bearer token, 401
status=$(http_status 169.254.2.1 10261)
say "GET http://169.254.2.1:10261/api/v1/nodes without a token: $status"
check "169.254.2.1:10261 answers 401 without a bearer token" grep -q '^HTTP/1.1 401' <<<"$status"
# The HTTPS port on the same address, verified against the cluster CA as pods do.
status=$(printf 'GET /api/v1/nodes HTTP/1.1\r\nHost: 169.254.2.1\r\nConnection: close\r\n\r\n' |
  timeout 10 openssl s_client -quiet -verify_return_error -CAfile $pki/ca.crt \
    -verify_ip 169.254.2.1 -connect 169.254.2.1:10268 2>/tmp/s_client.log | head -1 | tr -d '\r')
say "GET https://169.254.2.1:10268/api/v1/nodes without a token: $status"
check "169.254.2.1:10268 serves TLS verified for 169.254.2.1 and answers 401 without a token" \
  grep -q '^HTTP/1.1 401' <<<"$status"
grep -q '^HTTP/1.1 401' <<<"$status" || sed 's/^/VMTEST s_client: /' /tmp/s_client.log

# (c) deleted, re-created by the keeper within its 60 s period
ip link del hub-dummy0
check "ip link del hub-dummy0 removed it" bash -c '! ip link show hub-dummy0 >/dev/null 2>&1'
deleted=$(date +%s)
if poll 90 interface_ok; then
  say "ok: hub-dummy0 re-created, up and re-addressed" \
    "$(($(date +%s) - deleted)) s after ip link del"
else
  say "FAIL: hub-dummy0 not back 90 s after ip link del"
  failures=$((failures + 1))
fi
ip -d addr show dev hub-dummy0 2>&1 | sed 's/^/VMTEST ip: /'
grep 'changed by someone else' /tmp/hub.log | sed 's/^/VMTEST hub: /'
check "the hub logged the re-creation" \
  hub_log_has 'hub-dummy0 was changed by someone else: re-created'
status=$(http_status 169.254.2.1 10261)
say "after re-creation, GET without a token: $status"
check "169.254.2.1:10261 serves again after re-creation (401)" grep -q '^HTTP/1.1 401' <<<"$status"

# (d) SIGTERM: the hub drains, deletes the interface and exits 0
kill -TERM "$hub"
exited() { ! kill -0 "$hub" 2>/dev/null; }
check "the hub exits within 20 s of SIGTERM" poll 20 exited
wait "$hub"
code=$?
say "hub exit status $code"
check "the hub's exit status is 0" [ "$code" -eq 0 ]
check "hub-dummy0 is gone after SIGTERM" bash -c '! ip link show hub-dummy0 >/dev/null 2>&1'
grep 'deleted' /tmp/hub.log | sed 's/^/VMTEST hub: /'

# The unit tests, in this kernel: kind dummy is usable, so usable_kind() picks it.
if [ -x /yurthub/net_tests ]; then
  check "ip link add probe0 type dummy works (the unit tests use kind dummy)" \
    bash -c 'ip link add probe0 type dummy && ip link del probe0'
  /yurthub/net_tests --gtest_filter='DummyInterface.*' >/tmp/unit.log 2>&1
  code=$?
  if [ "$code" -eq 0 ]; then
    grep -E '^\[ +(OK|PASSED|SKIPPED) +\]' /tmp/unit.log | sed 's/^/VMTEST unit: /'
  else
    sed 's/^/VMTEST unit: /' /tmp/unit.log
  fi
  check "net_tests --gtest_filter=DummyInterface.* passes" [ "$code" -eq 0 ]
  check "  ... with no case skipped" bash -c '! grep -q "SKIPPED" /tmp/unit.log'
fi
exit
