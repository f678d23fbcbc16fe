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
# one dpkg-query for all (a process start costs milliseconds, make test runs this first)
declare -A have=()
while IFS=$'\t' read -r p s; do
  [ "$s" = 'install ok installed' ] && have[$p]=1
done < <(dpkg-query -W -f='${Package}\t${Status}\n' "${pkgs[@]}" 2>/dev/null)
for p in "${pkgs[@]}"; do
  [ -n "${have[$p]:-}" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps.sh: installing missing Debian packages: ${missing[*]}" >&2
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
