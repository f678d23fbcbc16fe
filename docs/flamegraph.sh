#!/usr/bin/env bash
# Makes README's example of `lockswap report` on a stripped program: the
# profile of tests/progs/flame.c (`flame run`: four workers and a flusher on
# three mutexes), stripped, with its debug information served by the
# debuginfod stand-in of the tests on 127.0.0.1; then the report without and
# with DEBUGINFOD_URLS (printed), and the flame graphs as docs/flamegraph.svg
# and, drawn by headless Chromium, docs/flamegraph.png.
#
#   docs/flamegraph.sh [-a ALGO]     (after `make tests-build`; needs chromium)
set -euo pipefail
cd "$(dirname "$0")/.."
algo=pthread
case "${1:-}" in
  -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -a) algo=${2:?-a needs an algorithm}; shift 2 ;;
  "") ;;
  *) echo "flamegraph.sh: unknown option '$1' (valid: -a ALGO, --help)" >&2; exit 2 ;;
esac
[ -x build/progs/flame ] || { echo "flamegraph.sh: run make tests-build first" >&2; exit 2; }
command -v chromium >/dev/null || { echo "flamegraph.sh: chromium is not installed (scripts/deps.sh test)" >&2; exit 2; }

tmp=$(mktemp -d)
standin=
cleanup() {
  [ -n "$standin" ] && kill "$standin" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/srv" "$tmp/prog"
objcopy --only-keep-debug build/progs/flame "$tmp/flame.debug"
strip -o "$tmp/prog/flame" build/progs/flame
id=$(readelf -n "$tmp/prog/flame" | awk '/Build ID:/ { print $3 }')
mv "$tmp/flame.debug" "$tmp/srv/$id.debug"
tests/doubles-report/debuginfod-standin "$tmp/srv" "$tmp/port" "$tmp/requests" 120 &
standin=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done

export DEBUGINFOD_CACHE_PATH="$tmp/cache"
echo "\$ lockswap profile --top 2 -o run.json -- ./flame run     # flame: stripped"
root=$PWD
(cd "$tmp/prog" && "$root/build/lockswap" profile -a "$algo" --top 2 -o "$tmp/run.json" -- ./flame run 2>&1)
echo
echo "\$ lockswap report --top 1 run.json"
env -u DEBUGINFOD_URLS build/lockswap report --top 1 "$tmp/run.json" 2>&1
echo
echo "\$ export DEBUGINFOD_URLS=http://127.0.0.1:PORT"
echo "\$ lockswap report --top 1 run.json"
export DEBUGINFOD_URLS="http://127.0.0.1:$(cat "$tmp/port")"
build/lockswap report --top 1 "$tmp/run.json" 2>&1
echo
echo "\$ lockswap report --folded run.json"
build/lockswap report --folded "$tmp/run.json"
build/lockswap report --svg docs/flamegraph.svg --top 3 "$tmp/run.json"
h=$(grep -o 'height="[0-9]*"' docs/flamegraph.svg | head -1 | tr -dc 0-9)
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --user-data-dir="$tmp/chromium" --window-size=1200,"$h" \
  --screenshot="$PWD/docs/flamegraph.png" "file://$PWD/docs/flamegraph.svg" >/dev/null 2>&1
echo
echo "debuginfod requests: $(wc -l <"$tmp/requests") (build-id $id); wrote docs/flamegraph.svg, docs/flamegraph.png"
