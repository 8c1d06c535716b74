#!/usr/bin/env bash
# The dummy interface on a real Debian 12 kernel: registered by test/CMakeLists.txt as
# DummyInterfaceVmTest and skipped (exit 77) unless YURTHUB_VM_TEST=1 (a kernel download, a
# debootstrap and a VM boot; see docs/operations.md "Verified on a kernel with dummy links").
# Kernels without CONFIG_DUMMY (the 6.18 VM this was written on) test the same code with kind ifb
# only; here Debian's linux-image-amd64, whose dummy driver is a module loaded on demand, runs
# under qemu (KVM when /dev/kvm can be used, else TCG) with an initramfs root: a debootstrap
# minbase with kmod, iproute2, openssl, the hub's runtime libraries and the kernel's
# dummy/ifb/bridge modules (cached under build/vm/cache, never in git), plus, per run, the given
# yurthub and net_tests binaries, a PKI from scripts/gen-certs.sh and
# test/net/dummy_interface_vm_init.sh as /init, which runs the checks and powers off. Passes only
# if the serial console has the line "VMTEST RESULT PASS".
# Needs root (debootstrap, chroot) and the network for the first run; installs debootstrap,
# qemu-system-x86 and cpio if missing (scripts/setup.sh vm). Temp dir per run: parallel-safe
# once the cache exists. Every process it starts (qemu) is killed when it exits.
#
# Usage: dummy_interface_vm_test.sh YURTHUB [NET_TESTS]
# Environment: YURTHUB_VM_TEST=1 to run; YURTHUB_VM_MIRROR (default: the bookworm source apt
# uses here, else deb.debian.org); YURTHUB_VM_ACCEL=kvm|tcg to force one.
set -euo pipefail
src=$(realpath "$(dirname "$0")/../..")
yurthub=$(realpath "${1:?usage: dummy_interface_vm_test.sh YURTHUB [NET_TESTS]}")
net_tests=${2:+$(realpath "$2")}
start=$(date +%s.%N)
elapsed() { awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f", n - s }'; }
step() { echo "vm_test: $* ($(elapsed) s)"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

if [ "${YURTHUB_VM_TEST:-}" != 1 ]; then
  echo "skipped: YURTHUB_VM_TEST=1 boots a Debian kernel under qemu (root, network, minutes)"
  exit 77
fi
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot)"
bash "$src/scripts/setup.sh" vm >&2

tmp=$(mktemp -d)
qemu_pid=
cleanup() {
  if [ -n "$qemu_pid" ]; then
    kill "$qemu_pid" 2>/dev/null || true
    wait "$qemu_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# --- the cache: kernel and base root, rebuilt only when their stamp changes ------------------
cache=$src/build/vm/cache
mkdir -p "$cache"
suite=bookworm
source "$src/scripts/apt_mirror.sh"  # apt_mirror
main_mirror=${YURTHUB_VM_MIRROR:-$(apt_mirror $suite)}
main_mirror=${main_mirror:-http://deb.debian.org/debian}
# The hub's runtime libraries (its .deb's Depends), kmod for modprobe, iproute2 and openssl
# (s_client on the HTTPS port) for the checks.
include=kmod,iproute2,openssl,libssl3,zlib1g,liblmdb0,libyaml-cpp0.7,libstdc++6
# The kernel's modules the VM gets: dummy (the hub), ifb (the tests' kind elsewhere), and bridge
# with its dependencies (DummyInterface.RefusesSameNameOfAnotherKind makes a bridge).
modules=(drivers/net/dummy.ko drivers/net/ifb.ko net/bridge/bridge.ko net/802/stp.ko net/llc/llc.ko)

# The kernel: the package linux-image-amd64 depends on, its vmlinuz and modules unpacked.
kpkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ { print $2; exit }')
[ -n "$kpkg" ] || fail "apt knows no linux-image-amd64 (apt-get update?)"
kdir=$cache/$kpkg
if [ "$(cat "$kdir/.done" 2>/dev/null)" != "${modules[*]}" ]; then
  step "downloading $kpkg"
  rm -rf "$kdir" && mkdir -p "$kdir"
  (cd "$kdir" && apt-get download "$kpkg" >"$kdir/download.log" 2>&1) ||
    { cat "$kdir/download.log" >&2; fail "apt-get download $kpkg"; }
  # Only what the VM boots and loads: the whole package unpacks to 400 MB.
  mkdir "$kdir/x"
  dpkg-deb --fsys-tarfile "$kdir"/"$kpkg"_*.deb | tar -C "$kdir/x" -x --wildcards './boot/*' \
    './lib/modules/*/modules.builtin' './lib/modules/*/modules.builtin.modinfo' \
    './lib/modules/*/modules.order' "${modules[@]/#/./lib/modules/*/kernel/}"
  rm -f "$kdir"/*.deb
  echo "${modules[*]}" >"$kdir/.done"
fi
kver=$(basename "$(echo "$kdir"/x/lib/modules/*)")
kernel=$kdir/x/boot/vmlinuz-$kver
grep -qx 'CONFIG_DUMMY=m' "$kdir/x/boot/config-$kver" ||
  fail "$kver does not build dummy as a module"

# The base root as an uncompressed newc cpio (the kernel unpacks concatenated archives, so each
# run appends its own files): debootstrap minbase + $include + the modules.
base_cpio=$cache/$suite-$kver.cpio
stamp="$suite $main_mirror $include $kver ${modules[*]}"
if [ "$(cat "$base_cpio.stamp" 2>/dev/null)" != "$stamp" ]; then
  step "debootstrap $suite minbase from $main_mirror with $include"
  root=$cache/root.tmp
  rm -rf "$root" "$base_cpio" "$base_cpio.stamp"
  debootstrap --variant=minbase --include="$include" $suite "$root" "$main_mirror" \
    >"$cache/debootstrap.log" 2>&1 || { tail -20 "$cache/debootstrap.log" >&2; fail debootstrap; }
  # depmod writes the aliases modprobe resolves the kernel's request_module("rtnl-link-dummy")
  # with, and the bridge's dependencies.
  mods=$root/lib/modules/$kver
  mkdir -p "$mods"
  cp -r "$kdir/x/lib/modules/$kver/." "$mods/"
  chroot "$root" depmod "$kver"
  grep -q 'rtnl_link_dummy\|rtnl-link-dummy' "$mods/modules.alias" ||
    fail "depmod wrote no alias for rtnl-link-dummy"
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc \
    "$root"/usr/share/man "$root"/usr/share/locale
  (cd "$root" && find . -mindepth 1 | cpio -o -H newc -R 0:0 --quiet) >"$base_cpio.tmp"
  mv "$base_cpio.tmp" "$base_cpio"
  rm -rf "$root"
  echo "$stamp" >"$base_cpio.stamp"
fi
step "kernel $kver, base root $(du -h --apparent-size "$base_cpio" | cut -f1)"

# --- this run's files: /init, the binaries, the hub's credentials ----------------------------
extra=$tmp/extra
mkdir -p "$extra/yurthub" "$extra/usr/bin"
install -m 0755 "$src/test/net/dummy_interface_vm_init.sh" "$extra/init"
install -m 0755 "$yurthub" "$extra/usr/bin/yurthub"
[ -z "$net_tests" ] || install -m 0755 "$net_tests" "$extra/yurthub/net_tests"
bash "$src/scripts/gen-certs.sh" "$extra/yurthub/pki" edge-node-1 https://127.0.0.1:1 >/dev/null
# Every library the binaries need must come from the base root (the VM has nothing else).
cpio -it --quiet <"$base_cpio" | sed 's|^\./||' >"$tmp/base.list"
for bin in "$extra/usr/bin/yurthub" ${net_tests:+"$extra/yurthub/net_tests"}; do
  for lib in $(ldd "$bin" | awk '$3 ~ /^\// { print $3 }'); do
    grep -qxF "usr${lib#/usr}" "$tmp/base.list" ||
      fail "$(basename "$bin") needs $lib, not in the VM's root"
  done
done
(cd "$extra" && find . -mindepth 1 | cpio -o -H newc -R 0:0 --quiet) >"$tmp/extra.cpio"
cat "$base_cpio" "$tmp/extra.cpio" >"$tmp/initrd"

# --- boot -------------------------------------------------------------------------------------
accel=${YURTHUB_VM_ACCEL:-}
if [ -z "$accel" ]; then
  # KVM when it can be opened here, else TCG (emulation: the same kernel, slower). Not on a
  # host whose KVM is PVM (kvm_pvm, as on the VM this was written on): it runs kernels built as
  # PVM guests, and Debian's printed nothing after SeaBIOS's "Probing EDD" there.
  if (exec 3<>/dev/kvm) 2>/dev/null && [ ! -d /sys/module/kvm_pvm ]; then
    accel=kvm
  else
    accel=tcg
  fi
fi
console=$tmp/console.log
step "booting $kver under qemu, accel $accel"
boot=$(date +%s.%N)
# -no-reboot with panic=-1: a kernel panic ends qemu too; the timeout bounds a hung guest.
timeout 600 qemu-system-x86_64 -accel "$accel" -m 1024 -smp 2 -nographic -no-reboot -nic none \
  -kernel "$kernel" -initrd "$tmp/initrd" \
  -append "console=ttyS0 panic=-1 quiet loglevel=3 rdinit=/init" \
  </dev/null >"$console" 2>&1 &
qemu_pid=$!
set +e
wait "$qemu_pid"
qemu_rc=$?
set -e
qemu_pid=
step "qemu exited ($qemu_rc) after $(awk -v s="$boot" -v n="$(date +%s.%N)" \
  'BEGIN { printf "%.1f", n - s }') s"
tr -d '\r' <"$console" | grep '^VMTEST' || { tail -40 "$console" >&2; fail "no VMTEST line"; }
tr -d '\r' <"$console" | grep -qx 'VMTEST RESULT PASS' || {
  tail -60 "$console" >&2
  fail "the checks in the VM did not all pass"
}
step "PASS"
