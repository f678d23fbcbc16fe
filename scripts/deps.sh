#!/usr/bin/env bash
# Installs the Debian packages a make target needs, only when missing.
#   scripts/deps.sh test|demo|bench|model
# Runs apt-get as root (or through sudo); prints nothing when all is present.
set -euo pipefail

usage() { echo "usage: scripts/deps.sh test|demo|bench|model" >&2; }
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  test)  pkgs=(gcc g++ make bats bats-support bats-assert libhwloc-dev libunwind-dev libdebuginfod-dev libdw-dev gnuplot-nox m4 valgrind binutils clang-format
         python3 libc6-dbg chromium groff-base bash-completion debhelper dpkg-dev lintian) ;;
  demo)  pkgs=(gcc g++ make libhwloc-dev libunwind-dev libdebuginfod-dev libdw-dev python3) ;;
  bench) pkgs=(gcc g++ make libhwloc-dev libunwind-dev libdebuginfod-dev libdw-dev gnuplot-nox valgrind binutils xz-utils sysbench squashfs-tools python3
         pigz rocksdb-tools libssl-dev) ;;
  model) pkgs=(gcc make spin) ;;
  *) echo "deps.sh: unknown target '${1:-}' (valid: test, demo, bench, model)" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps.sh: installing missing Debian packages: ${missing[*]}" >&2
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
