# Sourced by cmd/packaging/build_image.sh and test/net/dummy_interface_vm_test.sh, which both
# debootstrap Debian 12 from the mirror this machine's apt uses.
# apt_mirror SUITE: the URI of the host's deb822 apt source that lists SUITE
# (/etc/apt/sources.list.d/*.sources), or nothing.
apt_mirror() {
  cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk -v suite="$1" 'BEGIN { RS = "" } $0 ~ "\nSuites:([^\n]* )?" suite "( |\n|$)" {
      if (match($0, /URIs: *[^ \n]+/)) {
        split(substr($0, RSTART, RLENGTH), uri, / +/); print uri[2]; exit } }'
}
