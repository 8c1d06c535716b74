#!/usr/bin/env bash
# Packaging tests, registered by test/packaging/CMakeLists.txt (ctest -R PackagingTest):
#   deb         builds the .deb with cpack into a temp dir and checks its control fields, its
#               files, its maintainer scripts, the unit (systemd-analyze verify) and
#               /etc/default/yurthub, then runs the extracted binary with the unit's command line.
#   static_pod  checks cmd/packaging/yurthub-static-pod.yaml with kubectl's typed decoding (offline)
#               and against yurtadm's template, the Dockerfile against scripts/setup.sh, and
#               cmd/packaging/build_image.sh against the Dockerfile.
# Every --flag the packaging names must be one `yurthub --help` lists, and every command line it
# builds must parse, so none of it can drift from hub/options.cc. Temp dirs only: parallel-safe.
#
# Usage: package_test.sh deb|static_pod BUILD_DIR SOURCE_DIR YURTHUB_BIN VERSION [CPACK]
set -euo pipefail
mode=$1 build=$2 src=$3 bin=$4 version=$5 cpack=${6:-cpack}
packaging=$src/cmd/packaging
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
ok() { echo "ok: $*"; }

# The flags `yurthub --help` lists, one per line, sorted.
help_flags() {
  "$1" --help | grep -oE '^ +--[a-z0-9_-]+' | tr -d ' ' | sort -u
}

# check_flags FILE HUB: every --flag named in FILE, comments included (an operator uncomments
# them), is one HUB's --help lists.
check_flags() {
  local file=$1 hub=$2 known used unknown
  known=$(help_flags "$hub")
  grep -qx -- --server-addr <<<"$known" || fail "$hub --help lists no --server-addr"
  used=$(grep -oE -- '(^|[^A-Za-z0-9-])--[a-z][a-z0-9_-]*' "$file" | grep -oE -- '--[a-z0-9_-]+' |
    sort -u)
  [ -n "$used" ] || fail "$file names no flag"
  unknown=$(comm -23 <(echo "$used") <(echo "$known"))
  [ -z "$unknown" ] || fail "$file names flags yurthub does not have: $(echo $unknown)"
  ok "$(basename "$file"): $(echo "$used" | wc -l) flags, all in yurthub --help"
}

# parses HUB ARGS...: the hub accepts the command line (flag names and values); --help makes it
# exit after parsing instead of running.
parses() {
  local hub=$1 out
  shift
  out=$("$hub" "$@" --help 2>&1 >/dev/null) || fail "yurthub rejects $*: $out"
}

test_deb() {
  local out=$tmp/out root=$tmp/root deb field depends
  mkdir -p "$out" "$root"
  "$cpack" --config "$build/CPackConfig.cmake" -B "$out" >"$tmp/cpack.log" 2>&1 || {
    cat "$tmp/cpack.log" >&2
    fail "cpack"
  }
  deb=$(echo "$out"/yurthub_"$version"_*.deb)
  [ -f "$deb" ] || fail "no yurthub_${version}_<arch>.deb in $(ls "$out")"
  ok "cpack made $(basename "$deb")"

  [ "$(dpkg-deb -f "$deb" Package)" = yurthub ] || fail "Package: $(dpkg-deb -f "$deb" Package)"
  [ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "Version: $(dpkg-deb -f "$deb" Version)"
  [ "$(dpkg-deb -f "$deb" Architecture)" = "$(dpkg --print-architecture)" ] ||
    fail "Architecture: $(dpkg-deb -f "$deb" Architecture)"
  depends=$(dpkg-deb -f "$deb" Depends)
  # What the binary links (ldd): OpenSSL, LMDB, yaml-cpp, zlib, the C and C++ runtimes.
  for field in libc6 libgcc-s1 libstdc++6 libssl3 liblmdb0 libyaml-cpp0.7 zlib1g; do
    tr ',' '\n' <<<"$depends" | awk '{print $1}' | grep -qxF "$field" ||
      fail "Depends lacks $field: $depends"
  done
  ok "Package yurthub, Version $version, Depends: $depends"

  # The files, exactly (directories aside): a new one must be added here on purpose.
  dpkg-deb -c "$deb" >"$tmp/contents"
  awk '$1 !~ /^d/ {print $6}' "$tmp/contents" | sort >"$tmp/files"
  printf '%s\n' ./etc/default/yurthub ./lib/systemd/system/yurthub.service \
    ./lib/systemd/system/yurthub.socket ./usr/bin/yurthub \
    ./usr/share/doc/yurthub/README.md ./usr/share/doc/yurthub/operations.md | sort >"$tmp/want"
  diff -u "$tmp/want" "$tmp/files" >&2 || fail "files in the package (- expected, + found)"
  grep -qE '^-rwxr-xr-x root/root .* \./usr/bin/yurthub$' "$tmp/contents" ||
    fail "/usr/bin/yurthub is not root-owned 0755"
  ok "files: $(echo $(cat "$tmp/files"))"

  dpkg-deb -e "$deb" "$tmp/control"
  [ "$(cat "$tmp/control/conffiles")" = /etc/default/yurthub ] ||
    fail "conffiles: $(cat "$tmp/control/conffiles" 2>/dev/null)"
  for field in postinst prerm postrm; do
    [ -x "$tmp/control/$field" ] || fail "$field missing or not executable"
    sh -n "$tmp/control/$field" || fail "$field: sh syntax"
  done
  ok "conffiles /etc/default/yurthub; postinst, prerm, postrm"

  dpkg-deb -x "$deb" "$root"
  local hub=$root/usr/bin/yurthub unit=$root/lib/systemd/system/yurthub.service
  local defaults=$root/etc/default/yurthub
  [ "$("$hub" --version)" = "yurthub $version" ] ||
    fail "extracted yurthub --version says $("$hub" --version), the package $version"
  file -L "$hub" | grep -q ', stripped' || fail "the packaged binary is not stripped"
  ok "extracted yurthub --version: yurthub $version (stripped)"

  # systemd-analyze verify: unknown keys and bad values are only warnings (exit 0), so any output
  # fails. ExecStart= and EnvironmentFile= point into the extracted tree, where the files are.
  sed -e "s|^ExecStart=/usr/bin/yurthub |ExecStart=$hub |" \
    -e "s|^EnvironmentFile=/etc/default/yurthub$|EnvironmentFile=$defaults|" \
    "$unit" >"$tmp/yurthub.service"
  grep -q "^ExecStart=$hub " "$tmp/yurthub.service" ||
    fail "ExecStart= does not run /usr/bin/yurthub"
  grep -q "^EnvironmentFile=$defaults$" "$tmp/yurthub.service" ||
    fail "EnvironmentFile= is not /etc/default/yurthub"
  cp "$root/lib/systemd/system/yurthub.socket" "$tmp/yurthub.socket"
  (cd "$tmp" && systemd-analyze verify "$tmp/yurthub.service" "$tmp/yurthub.socket") \
    >"$tmp/verify.log" 2>&1 || true
  [ ! -s "$tmp/verify.log" ] || {
    cat "$tmp/verify.log" >&2
    fail "systemd-analyze verify yurthub.service yurthub.socket"
  }
  for field in ListenStream=127.0.0.1:10261 ListenStream=127.0.0.1:10267 \
    ListenStream=169.254.2.1:10261 ListenStream=169.254.2.1:10268 FreeBind=true; do
    grep -qx "$field" "$tmp/yurthub.socket" || fail "the socket unit has no $field"
  done
  grep -qx "Also=yurthub.socket" "$unit" || fail "enabling the service does not enable the socket"
  for field in Type=simple Restart=always After=network-online.target Before=kubelet.service \
    WantedBy=multi-user.target; do
    grep -qx "$field" "$unit" || fail "the unit has no $field"
  done
  ok "systemd-analyze verify: clean; Type=simple, Restart=always, network-online, Before=kubelet; the socket holds 10261, 10267, 10268"

  check_flags "$unit" "$hub"
  check_flags "$defaults" "$hub"

  # The command systemd runs: ExecStart with the variables of /etc/default/yurthub (the shell reads
  # its KEY=value and KEY="a b" lines as systemd does; ${X} is one argument, $X splits).
  local exec_line args argv
  exec_line=$(sed -n 's/^ExecStart=//p' "$unit")
  [ "${exec_line%% *}" = /usr/bin/yurthub ] || fail "ExecStart=$exec_line"
  args=$(
    NODE_NAME=test-node
    set -a
    . "$defaults"
    set +a
    [ -n "${SERVER_ADDR:-}" ] || fail "/etc/default/yurthub sets no SERVER_ADDR"
    a=${exec_line#* }
    a=${a//'${NODE_NAME}'/$NODE_NAME}
    a=${a//'${SERVER_ADDR}'/$SERVER_ADDR}
    a=${a//'$YURTHUB_ARGS'/${YURTHUB_ARGS:-}}
    echo "$a"
  )
  [[ $args != *'$'* ]] || fail "ExecStart uses a variable /etc/default/yurthub does not set: $args"
  read -ra argv <<<"$args"
  parses "$hub" "${argv[@]}"
  ok "yurthub accepts the unit's command line: $args"

  test_converted_node "$hub" "$unit"
}

# A node yurtadm or node-servant converted: their drop-in (docs/examples/10-yurthub.conf) replaces
# ExecStart with /usr/local/bin/yurthub. postinst makes that path this package's binary, keeping
# the one it finds there, which postrm puts back; the drop-in's command line parses.
test_converted_node() {
  local hub=$1 unit=$2 dropin=$src/docs/examples/10-yurthub.conf dpkgroot=$tmp/dpkgroot
  local stub=$tmp/stub link exec_line args argv bootstrap
  link=$dpkgroot/usr/local/bin/yurthub
  mkdir -p "${link%/*}" "$stub"
  printf '#!/bin/sh\nexit 0\n' >"$stub/systemctl" # no host systemd is touched
  chmod +x "$stub/systemctl"
  echo "upstream yurthub" >"$link"
  PATH=$stub:$PATH DPKG_ROOT=$dpkgroot sh "$tmp/control/postinst" configure ||
    fail "postinst configure"
  [ "$(readlink "$link")" = /usr/bin/yurthub ] || fail "postinst did not link $link"
  [ "$(cat "$link.openyurt")" = "upstream yurthub" ] || fail "postinst lost the binary it found"
  PATH=$stub:$PATH DPKG_ROOT=$dpkgroot sh "$tmp/control/postinst" configure "$version" ||
    fail "postinst configure (upgrade)"
  [ "$(readlink "$link")" = /usr/bin/yurthub ] && [ "$(cat "$link.openyurt")" = "upstream yurthub" ] ||
    fail "a second postinst changed the link or the kept binary"
  PATH=$stub:$PATH DPKG_ROOT=$dpkgroot sh "$tmp/control/postrm" remove || fail "postrm remove"
  [ ! -L "$link" ] && [ "$(cat "$link")" = "upstream yurthub" ] && [ ! -e "$link.openyurt" ] ||
    fail "postrm did not put the kept binary back"
  ok "postinst links /usr/local/bin/yurthub (keeping what was there), postrm puts it back"

  # The unit with the drop-in: systemd-analyze verify clean, and its ExecStart parses, for both
  # bootstrap modes yurtadm writes.
  mkdir -p "$tmp/units/yurthub.service.d"
  sed -e "s|^EnvironmentFile=/etc/default/yurthub$|EnvironmentFile=$root/etc/default/yurthub|" \
    "$unit" >"$tmp/units/yurthub.service"
  sed -e "s|^ExecStart=/usr/local/bin/yurthub |ExecStart=$hub |" "$dropin" \
    >"$tmp/units/yurthub.service.d/10-yurthub.conf"
  (cd "$tmp/units" && SYSTEMD_UNIT_PATH=$tmp/units: systemd-analyze verify yurthub.service) \
    >"$tmp/verify-dropin.log" 2>&1 || true
  [ ! -s "$tmp/verify-dropin.log" ] || {
    cat "$tmp/verify-dropin.log" >&2
    fail "systemd-analyze verify yurthub.service with node-servant's drop-in"
  }
  exec_line=$(grep '^ExecStart=/usr/local/bin/yurthub ' "$dropin" | sed 's/^ExecStart=//')
  [ -n "$exec_line" ] || fail "$dropin has no ExecStart=/usr/local/bin/yurthub"
  for bootstrap in --bootstrap-mode=kubeletcertificate \
    --bootstrap-file=/var/lib/yurthub/bootstrap-hub.conf; do
    args=$(
      eval "$(sed -n 's/^Environment="\(YURTHUB_[A-Z_]*\)=\(.*\)"$/\1="\2"/p' "$dropin")"
      YURTHUB_BOOTSTRAP_ARGS=$bootstrap
      a=${exec_line#* }
      a=${a//'$YURTHUB_BOOTSTRAP_ARGS'/$YURTHUB_BOOTSTRAP_ARGS}
      a=${a//'$YURTHUB_CONFIG_ARGS'/$YURTHUB_CONFIG_ARGS}
      a=${a//'$YURTHUB_EXTRA_ARGS'/$YURTHUB_EXTRA_ARGS}
      echo "$a"
    )
    [[ $args != *'$'* ]] || fail "the drop-in uses a variable it does not set: $args"
    read -ra argv <<<"$args"
    parses "$hub" "${argv[@]}"
  done
  check_flags "$dropin" "$hub"
  ok "node-servant's drop-in over the unit: verify clean, yurthub accepts its command line"
}

test_static_pod() {
  local manifest=$packaging/yurthub-static-pod.yaml dockerfile=$packaging/Dockerfile
  local kubectl image typed got want pkg
  kubectl=$(command -v kubectl) || fail "kubectl is not installed"
  image=$(sed -n 's/^ *image: *//p' "$manifest")
  [ "${image##*:}" = "$version" ] || fail "the manifest's image $image is not tagged $version"

  # kubectl decodes the pod into its typed v1.Pod offline (set image --local; `create
  # --dry-run=client` needs a server). Typed decoding drops unknown fields, so every key of the
  # file must come back: a misspelled or misplaced field fails here.
  typed=$(KUBECONFIG=/dev/null "$kubectl" set image --local -f "$manifest" yurt-hub=decoded \
    -o yaml 2>&1) || fail "kubectl cannot decode the manifest: $typed"
  keys() { grep -v '^ *#' | grep -oE '^[ -]*[A-Za-z0-9_.-]+:' | sed -E 's/^[ -]*//; s/:$//' |
    sort -u; }
  got=$(comm -23 <(keys <"$manifest") <(keys <<<"$typed"))
  [ -z "$got" ] || fail "fields lost decoding a v1.Pod (unknown, or an empty value): $(echo $got)"
  ok "kubectl decodes the manifest as a v1.Pod, no unknown fields"

  # What yurtadm's YurthubTemplate has (openyurt pkg/yurtadm/constants/constants.go).
  got=$(KUBECONFIG=/dev/null "$kubectl" set image --local -f "$manifest" yurt-hub=decoded -o \
    jsonpath='{.metadata.namespace}/{.metadata.name} {.metadata.labels.k8s-app}
hostNetwork={.spec.hostNetwork} {.spec.priorityClassName}
{.spec.containers[0].command[0]}
{range .spec.volumes[*]}{.name}={.hostPath.path},{.hostPath.type} {end}
{range .spec.containers[0].volumeMounts[*]}{.name}={.mountPath} {end}
liveness host={.spec.containers[0].livenessProbe.httpGet.host}
liveness port={.spec.containers[0].livenessProbe.httpGet.port}
liveness path={.spec.containers[0].livenessProbe.httpGet.path}
NET_ADMIN={.spec.containers[0].securityContext.capabilities.add[0]}
NODE_NAME={.spec.containers[0].env[0].valueFrom.fieldRef.fieldPath}')
  want='kube-system/yurt-hub yurt-hub
hostNetwork=true system-node-critical
yurthub
hub-dir=/var/lib/yurthub,DirectoryOrCreate kubernetes=/etc/kubernetes,Directory 
hub-dir=/var/lib/yurthub kubernetes=/etc/kubernetes 
liveness host=127.0.0.1
liveness port=10267
liveness path=/v1/healthz
NET_ADMIN=NET_ADMIN
NODE_NAME=spec.nodeName'
  diff -u <(echo "$want") <(echo "$got") >&2 ||
    fail "the pod differs from yurtadm's (- want, + got)"
  # (jsonpath prints integers as floats)
  grep -qx '  priority: 2000001000' <<<"$typed" || fail "priority is not 2000001000"
  ok "yurtadm's pod: name, hostNetwork, priority, mounts, liveness probe, NET_ADMIN, NODE_NAME"

  check_flags "$manifest" "$bin"
  local argv=()
  mapfile -t argv < <(KUBECONFIG=/dev/null "$kubectl" set image --local -f "$manifest" \
    yurt-hub=decoded -o jsonpath='{range .spec.containers[0].command[1:]}{@}{"\n"}{end}')
  [ ${#argv[@]} -gt 0 ] || fail "the manifest's command has no flags"
  argv=("${argv[@]//'$(NODE_NAME)'/test-node}")
  parses "$bin" "${argv[@]}"
  ok "yurthub accepts the manifest's command: ${argv[*]}"

  # The image: its entrypoint is the packaged binary, and its build stage installs every library
  # scripts/setup.sh installs for building (so a new dependency cannot be forgotten here).
  grep -qx 'ENTRYPOINT \["/usr/bin/yurthub"\]' "$dockerfile" || fail "Dockerfile ENTRYPOINT"
  grep -qx 'FROM debian:12 AS build' "$dockerfile" || fail "Dockerfile build stage"
  grep -qx 'FROM debian:12-slim' "$dockerfile" || fail "Dockerfile runtime stage"
  for pkg in $(sed -n '/^packages=(/,/)/p' "$src/scripts/setup.sh" | tr ' ()' '\n\n\n' |
    grep -E -- '-dev$'); do
    case $pkg in libgtest-dev | libgmock-dev | libclang-rt-*) continue ;; esac
    grep -qE "(^| )$pkg( |$)" "$dockerfile" || fail "the Dockerfile does not install $pkg"
  done
  ok "Dockerfile: debian:12 build, debian:12-slim runtime, entrypoint /usr/bin/yurthub"

  # build_image.sh makes the same image without Docker: the same commands in each stage.
  local script=$packaging/build_image.sh line
  while read -r line; do
    grep -qF -- "$line" "$dockerfile" || fail "the Dockerfile no longer has: $line"
    grep -qF -- "$line" "$script" || fail "build_image.sh does not do as the Dockerfile: $line"
  done <<'EOF'
-DYURTHUB_BUILD_TESTS=OFF
--target package
apt-get install -y --no-install-recommends /tmp/yurthub.deb
rm -rf /var/lib/apt/lists/*
EOF
  grep -qE -- '--config.entrypoint /usr/bin/yurthub( |$)' "$script" ||
    fail "build_image.sh entrypoint"
  grep -q -- '--variant=minbase' "$script" || fail "build_image.sh does not debootstrap a minbase"
  ok "build_image.sh: the Dockerfile's stages and entrypoint"
}

case $mode in
  deb) test_deb ;;
  static_pod) test_static_pod ;;
  *) fail "unknown mode $mode" ;;
esac
