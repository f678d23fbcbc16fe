#!/usr/bin/env bats
# `lockswap report` (issue 23): symbols of stripped programs through
# debuginfod, with the local debug files that work without it; and flame
# graphs (--folded, --svg), the SVG drawn by a real browser (Debian's
# Chromium, headless).
#
# The stripped program is tests/progs/flame.c, its debug information split
# off with objcopy --only-keep-debug and served by a stand-in for a
# debuginfod server on 127.0.0.1 (tests/doubles-report/debuginfod-standin),
# started and stopped here; debuginfod's cache is a directory of the test's.
# Nothing reaches outside the machine: DEBUGINFOD_URLS names the stand-in
# or nothing.
bats_require_minimum_version 1.5.0
load helpers
TEST_TIMEOUT=60
DOUBLES="$ROOT/tests/doubles-report"
SYNTH="$ROOT/tests/data/report-synthetic.json"

# Once per file: the stripped program, its debug file, the profile of its
# known contention, saved as JSON.
setup_file() {
  local d=$BATS_FILE_TMPDIR id
  mkdir -p "$d/srv" "$d/empty"
  objcopy --only-keep-debug "$PROGS/flame" "$d/flame.debug"
  strip -o "$d/flame" "$PROGS/flame"
  id=$(readelf -n "$d/flame" | awk '/Build ID:/ { print $3 }')
  [ -n "$id" ]
  cp "$d/flame.debug" "$d/srv/$id.debug"
  echo "$id" >"$d/build-id"
  timeout -k 5 60 "$LOCKSWAP" profile --top 0 -o "$d/known.json" -- "$d/flame" known >"$d/known.expect"
}

setup() {
  T=$(mktemp -d)
  D=$BATS_FILE_TMPDIR
  ID=$(cat "$D/build-id")
  STANDIN=
  export DEBUGINFOD_CACHE_PATH="$T/cache"
  unset DEBUGINFOD_URLS DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE
}

teardown() {
  stop_standin
  rm -rf "$T"
}

# start_standin DIR: serves DIR's *.debug files; sets DEBUGINFOD_URLS.
start_standin() {
  rm -f "$T/port" "$T/requests"
  touch "$T/requests"
  "$DOUBLES/debuginfod-standin" "$1" "$T/port" "$T/requests" 60 &
  STANDIN=$!
  local i
  for i in $(seq 100); do
    [ -s "$T/port" ] && break
    sleep 0.1
  done
  [ -s "$T/port" ] || { echo "the debuginfod stand-in did not start"; return 1; }
  export DEBUGINFOD_URLS="http://127.0.0.1:$(cat "$T/port")"
}

stop_standin() {
  if [ -n "$STANDIN" ]; then
    kill "$STANDIN" 2>/dev/null || true
    wait "$STANDIN" 2>/dev/null || true
    STANDIN=
  fi
}

report() {
  timeout -k 5 "$(hang_timeout)" "$LOCKSWAP" report "$@"
}

@test "report, no DEBUGINFOD_URLS: a stripped program's frames stay offsets, and one line per module says why" {
  run --separate-stderr report "$D/known.json"
  assert_success
  [[ "$output" == *"flame+0x"* ]] || { echo "$output"; return 1; }
  [[ "$output" != *"cache_lookup"* ]] || { echo "$output"; return 1; }
  [ "$(grep -c "^lockswap report: $D/flame: no debug information (build-id $ID): .*set DEBUGINFOD_URLS" <<<"$stderr")" -eq 1 ] ||
    { echo "$stderr"; return 1; }
}

@test "report, DEBUGINFOD_URLS: the stripped program's frames get names and file:line from a debuginfod server (a local stand-in), one request per module, then from debuginfod's cache" {
  start_standin "$D/srv"
  run --separate-stderr report "$D/known.json"
  assert_success
  [ -z "$stderr" ] || { echo "$stderr"; return 1; }
  [[ "$output" == *"cache_lookup (flame.c:"* ]] || { echo "$output"; return 1; }
  [[ "$output" == *"stats_init (flame.c:"* ]] || { echo "$output"; return 1; }
  [[ "$output" != *"flame+0x"* ]] || { echo "$output"; return 1; }
  # 4 call sites and 3 creation stacks in the program, one request; libc
  # has its own debug file here (libc6-dbg) and is not asked for
  [ "$(cat "$T/requests")" = "/buildid/$ID/debuginfo" ] || { cat "$T/requests"; return 1; }
  [ -s "$T/cache/$ID/debuginfo" ]
  # again: from the cache, no request
  run --separate-stderr report "$D/known.json"
  assert_success
  [ "$(wc -l <"$T/requests")" -eq 1 ] || { cat "$T/requests"; return 1; }
  # and with the server gone
  stop_standin
  run --separate-stderr report --folded --weight contended "$D/known.json"
  assert_success
  [[ "$output" == *"worker;handle_request;cache_lookup;mutex #"*" cache_init (flame.c:"* ]] || { echo "$output"; return 1; }
}

@test "report, DEBUGINFOD_URLS: a server without the debug file, or none listening: one line naming the module and why, frames stay offsets" {
  start_standin "$D/empty"
  run --separate-stderr report "$D/known.json"
  assert_success
  [[ "$output" == *"flame+0x"* ]] || { echo "$output"; return 1; }
  [ "${#stderr_lines[@]}" -eq 1 ] &&
    [[ "$stderr" == "lockswap report: $D/flame: no debug information here, and debuginfod did not get it (build-id $ID: no server in DEBUGINFOD_URLS has it)"* ]] ||
    { echo "$stderr"; return 1; }
  [ "$(cat "$T/requests")" = "/buildid/$ID/debuginfo" ] || { cat "$T/requests"; return 1; }
  # a port where nothing listens: the stand-in stopped
  stop_standin
  rm -rf "$T/cache"
  run --separate-stderr report "$D/known.json"
  assert_success
  [ "${#stderr_lines[@]}" -eq 1 ] && [[ "$stderr" == "lockswap report: $D/flame: no debug information here, and debuginfod did not get it (build-id $ID: "* ]] ||
    { echo "$stderr"; return 1; }
}

@test "report: local debug files need no server: /usr/lib/debug/.build-id (libc6-dbg's libc), and a .gnu_debuglink file beside the program" {
  local libc id
  libc=$(ldd "$PROGS/flame" | awk '/libc.so.6/ { print $3 }')
  id=$(readelf -n "$libc" | awk '/Build ID:/ { print $3 }')
  [ -r "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] ||
    { echo "no debug file for $libc under /usr/lib/debug/.build-id: install libc6-dbg (scripts/deps.sh test)"; return 1; }
  # the program with a debug link to its debug file, beside it
  mkdir "$T/linked"
  cp "$D/flame" "$D/flame.debug" "$T/linked/"
  objcopy --add-gnu-debuglink="$T/linked/flame.debug" "$T/linked/flame"
  timeout -k 5 60 "$LOCKSWAP" profile --top 0 -o "$T/linked.json" -- "$T/linked/flame" known >/dev/null
  start_standin "$D/empty"
  run --separate-stderr report "$T/linked.json"
  assert_success
  [ -z "$stderr" ] || { echo "$stderr"; return 1; }
  [[ "$output" == *"start_thread (pthread_create.c:"* ]] || { echo "$output"; return 1; }
  [[ "$output" == *"cache_lookup (flame.c:"* ]] || { echo "$output"; return 1; }
  [ ! -s "$T/requests" ] || { cat "$T/requests"; return 1; }
}

@test "report --folded: the folded stacks of a synthetic profile, exactly: wait ns, contended counts, hold by creation stack; ';' in a name, unnamed frames, the stacks not sampled" {
  run --separate-stderr report --folded "$SYNTH"
  assert_success
  assert_output - <<'EOF'
main;handler;hot_function;mutex #1 make_locks 8000000
main;handler;cold:path;mutex #1 make_locks 1000000
main;libx.so+0x309;mutex #2 make_locks 2000000
[stack not sampled];mutex #2 make_locks 1000000
EOF
  run --separate-stderr report --folded --weight contended "$SYNTH"
  assert_success
  assert_output - <<'EOF'
main;handler;hot_function;mutex #1 make_locks 8
main;handler;cold:path;mutex #1 make_locks 2
main;libx.so+0x309;mutex #2 make_locks 4
[stack not sampled];mutex #2 make_locks 2
EOF
  run --separate-stderr report --folded --weight hold "$SYNTH"
  assert_success
  assert_output - <<'EOF'
main;make_locks;mutex #1 make_locks 5000000
main;make_locks;mutex #2 make_locks 2000000
EOF
}

@test "report --folded: a program's known contention (3, 1, 2 and 1 waits on four paths), and wait and hold totals equal to the profile's, under glibc's mutex and mcs" {
  local a
  start_standin "$D/srv"
  for a in pthread mcs; do
    timeout -k 5 60 "$LOCKSWAP" profile -a "$a" -w park --top 0 -o "$T/$a.json" -- "$D/flame" known >"$T/$a.expect"
    run --separate-stderr report --folded --weight contended "$T/$a.json"
    assert_success
    # the program's own frames, the mutex named by its creator
    diff -u <(sort "$T/$a.expect") <(sed -E 's/^.*;(worker|flusher);/\1;/; s/;mutex #[0-9]+ ([^ ]+) \([^)]*\)/;[\1]/' <<<"$output" | sort) ||
      { echo "$a: $output"; return 1; }
    # weight wait and hold: the totals of the profile's mutexes
    local want got
    for w in wait hold; do
      want=$(python3 -c 'import json, sys; print(sum(m[sys.argv[2]] for m in json.load(open(sys.argv[1]))["mutexes"]))' "$T/$a.json" "${w}_ns")
      got=$(report --folded --weight "$w" "$T/$a.json" 2>/dev/null | awk '{ s += $NF } END { print s }')
      [ "$got" -gt 0 ] && [ "$got" -eq "$want" ] || { echo "$a $w: folded total $got, profile $want"; return 1; }
    done
  done
}

# chromium ARGS...: Debian's Chromium, headless, as the machine's notes say.
chromium_run() {
  command -v chromium >/dev/null || { echo "chromium is not installed (scripts/deps.sh test installs it)"; return 1; }
  timeout -k 5 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d -p "$T")" "$@" 2>>"$T/chromium.err"
}

@test "report --svg: a self-contained SVG that Chromium draws: the hot stack's frame is there, wide, with its name, in its colour; per mutex graphs and the hold graph; a click zooms" {
  run --separate-stderr report --svg "$T/f.svg" --top 5 "$SYNTH"
  assert_success
  [ -z "$output" ]
  # self-contained: no reference to another file or address
  ! grep -qE '(href|src)=|url\(' "$T/f.svg"
  # the page as a browser lays it out: every frame's name, text width, box
  {
    echo '<!DOCTYPE html><html><body style="margin:0">'
    sed 1d "$T/f.svg"
    cat <<'EOF'
<pre id="out"></pre><script>
var out = [];
document.querySelectorAll('g.f').forEach(function (g) {
  var t = g.querySelector('text'), r = g.querySelector('rect').getBBox();
  out.push(['F', g.querySelector('title').textContent.split('\n')[0], t.textContent,
            t.getComputedTextLength().toFixed(1), r.x.toFixed(1), r.y.toFixed(1), r.width.toFixed(1)].join('|'));
});
document.querySelectorAll('text.title').forEach(function (t) { out.push('T|' + t.textContent); });
// zoom: a click on the whole program's "handler" widens it to the graph
var first = document.querySelector('g.graph'), frames = first.querySelectorAll('g.f');
function named(n) { return Array.prototype.filter.call(frames, function (g) {
  return g.querySelector('title').textContent.split('\n')[0] === n; })[0]; }
named('handler').dispatchEvent(new MouseEvent('click'));
['handler', 'hot_function', 'libx.so+0x309'].forEach(function (n) {
  var g = named(n);
  out.push(['Z', n, g.style.display, (+g.querySelector('rect').getAttribute('width')).toFixed(1)].join('|'));
});
document.getElementById('out').textContent = out.join('\n');
</script></body></html>
EOF
  } >"$T/page.html"
  chromium_run --dump-dom "file://$T/page.html" >"$T/dom.html" || { cat "$T/chromium.err"; return 1; }
  local hot
  hot=$(grep '^F|hot_function|' "$T/dom.html" | head -1)
  [ -n "$hot" ] || { cat "$T/dom.html"; return 1; }
  IFS='|' read -r _ _ text tw x y w <<<"$hot"
  # its whole name drawn, with a width; its box 8/12 of the 1180 px
  [ "$text" = hot_function ] && awk -v t="$tw" -v w="$w" 'BEGIN { exit !(t > 20 && w > 785 && w < 788) }' ||
    { echo "$hot"; return 1; }
  grep -q '^T|Wait time by call stack, whole program: 12.000 ms in 16 waits' "$T/dom.html"
  grep -q '^T|mutex #1 make_locks: wait 9.000 ms by call stack, 10 waits; held 5.000 ms in 1000 acquisitions' "$T/dom.html"
  grep -q '^T|mutex #2 make_locks: wait 3.000 ms by call stack, 6 waits; held 2.000 ms in 10 acquisitions' "$T/dom.html"
  grep -q '^T|Hold time by mutex, under the stack that created it: 7.000 ms in 1010 acquisitions' "$T/dom.html"
  # zoomed on "handler" (9 of the 12 ms): it spans the 1180 px, hot_function
  # 8/9 of them, the other stack is hidden
  grep -qx 'Z|handler||1180.0' "$T/dom.html" && grep -qx 'Z|hot_function||1048.9' "$T/dom.html" &&
    grep -qx 'Z|libx.so+0x309|none|.*' "$T/dom.html" || { grep '^Z' "$T/dom.html"; return 1; }
  # the SVG file itself, as a browser shows it: the hot frame's colour at
  # the middle of its box, the page's background above the graphs
  local h fill px
  h=$(grep -o 'height="[0-9]*"' "$T/f.svg" | head -1 | tr -dc 0-9)
  chromium_run --window-size=1200,"$h" --screenshot="$T/f.png" "file://$T/f.svg" >/dev/null || { cat "$T/chromium.err"; return 1; }
  fill=$(awk '/<title>hot_function$/ { getline; print; exit }' "$T/f.svg" | grep -o 'fill="rgb([0-9,]*)"' | tr -dc '0-9,' | tr , ' ')
  [ -n "$fill" ] || { grep -A1 hot_function "$T/f.svg"; return 1; }
  px=$("$DOUBLES/png-pixel" "$T/f.png" "$(awk -v x="$x" -v w="$w" 'BEGIN { printf "%d", x + w / 2 }'),$(awk -v y="$y" 'BEGIN { printf "%d", y + 8 }')" 600,44)
  [ "$(sed -n 1p <<<"$px")" = "$fill" ] && [ "$(sed -n 2p <<<"$px")" = "253 253 246" ] ||
    { echo "hot frame at $x,$y width $w: pixels $px, want $fill and the background"; return 1; }
}

@test "report: bad flame graph options: one line naming the problem and the valid choices, exit 2" {
  local v
  for v in "--weight hold" "--folded --weight x" "--folded --csv" "--svg $T/a.svg --folded" "--svg ''" "--svg $T/no/such/dir/a.svg"; do
    eval "run --separate-stderr report $v \"\$SYNTH\""
    [ "$status" -eq 2 ] && [ -z "$output" ] && [ "${#stderr_lines[@]}" -eq 1 ] && [[ "$stderr" == "lockswap report: "* ]] ||
      { echo "$v: status $status: $stderr"; return 1; }
  done
}
