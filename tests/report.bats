#!/usr/bin/env bats
# `lockswap report` (issues 23 and 34): the names it prints (lockswap's one
# symbol resolver, which the matcher of LOCKSWAP_ALGO_MAP shares: a frame
# named only inside a function's extent, every name a FUNCTION rule), symbols
# of stripped programs through debuginfod (bounded, announced, each failure
# with its reason), with the local debug files that work without it; and
# flame graphs (--folded, --svg), the SVG drawn by a real browser (Debian's
# Chromium, headless).
#
# The stripped programs are tests/progs/flame.c and tests/doubles-report/
# symbols.c (with its library: exported functions around unexported code,
# built by mk/profile.mk), their debug information split off with objcopy
# --only-keep-debug and served by a stand-in for a debuginfod server on
# 127.0.0.1 (tests/doubles-report/debuginfod-standin; --silent: one that
# accepts and never answers), started and stopped here; debuginfod's cache
# is a directory of the test's. Nothing reaches outside the machine:
# DEBUGINFOD_URLS names the stand-in, a port where nothing listens, a
# multicast address (no TCP route to it, on any machine) or nothing.
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
  DEBUGINFOD_CACHE_PATH="$d/empty" timeout -k 5 60 "$LOCKSWAP" profile --top 0 -o "$d/symbols.json" -- \
    "$B/symbols/symbols" known
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

# start_standin [--silent] DIR: serves DIR's *.debug files (--silent: accepts
# and never answers); sets DEBUGINFOD_URLS.
start_standin() {
  rm -f "$T/port" "$T/requests"
  touch "$T/requests"
  "$DOUBLES/debuginfod-standin" "$@" "$T/port" "$T/requests" 60 &
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
  # one line before the request, naming the module and the server
  [ "$stderr" = "lockswap report: $D/flame: asking debuginfod ($DEBUGINFOD_URLS) for its debug file, build-id $ID, for at most 10 s" ] ||
    { echo "$stderr"; return 1; }
  [[ "$output" == *"cache_lookup+0x"*" (flame.c:"* ]] || { echo "$output"; return 1; }
  [[ "$output" == *"stats_init+0x"*" (flame.c:"* ]] || { echo "$output"; return 1; }
  [[ "$output" != *"flame+0x"* ]] || { echo "$output"; return 1; }
  # 4 call sites and 3 creation stacks in the program, one request; libc
  # has its own debug file here (libc6-dbg) and is not asked for
  [ "$(cat "$T/requests")" = "/buildid/$ID/debuginfo" ] || { cat "$T/requests"; return 1; }
  [ -s "$T/cache/$ID/debuginfo" ]
  # again: from the cache, no request, nothing said
  run --separate-stderr report "$D/known.json"
  assert_success
  [ -z "$stderr" ] || { echo "$stderr"; return 1; }
  [ "$(wc -l <"$T/requests")" -eq 1 ] || { cat "$T/requests"; return 1; }
  # and with the server gone
  stop_standin
  run --separate-stderr report --folded --weight contended "$D/known.json"
  assert_success
  [[ "$output" == *"worker;handle_request;cache_lookup;mutex #"*" cache_init (flame.c:"* ]] || { echo "$output"; return 1; }
}

@test "report, DEBUGINFOD_URLS: each failure says its reason: not found, refused, unroutable; one line before the request, one after; frames stay offsets" {
  local why
  # fails: the lines the request and its failure print for flame (tail: why)
  fails() {
    run --separate-stderr report "$@" "$D/known.json"
    assert_success
    [[ "$output" == *"flame+0x"* ]] || { echo "$output"; return 1; }
    [ "${#stderr_lines[@]}" -eq 2 ] &&
      [ "${stderr_lines[0]}" = "lockswap report: $D/flame: asking debuginfod ($DEBUGINFOD_URLS) for its debug file, build-id $ID, for at most 10 s" ] &&
      [[ "${stderr_lines[1]}" == "lockswap report: $D/flame: no debug information here, and debuginfod did not get it (build-id $ID: "*"): its frames stay without file:line" ]] ||
      { echo "$stderr"; return 1; }
    why=${stderr_lines[1]#*build-id $ID: }
    why=${why%): its frames stay without file:line}
  }
  start_standin "$D/empty"
  fails
  [ "$why" = "not found: no server in DEBUGINFOD_URLS has it" ] || { echo "$why"; return 1; }
  [ "$(cat "$T/requests")" = "/buildid/$ID/debuginfo" ] || { cat "$T/requests"; return 1; }
  # a port where nothing listens: the stand-in stopped
  stop_standin
  rm -rf "$T/cache"
  fails
  [ "$why" = "refused: $DEBUGINFOD_URLS refused the connection (nothing listens there)" ] || { echo "$why"; return 1; }
  # no route: a multicast address, which TCP never reaches
  export DEBUGINFOD_URLS=http://224.0.0.1:8002
  fails
  [ "$why" = "unroutable: http://224.0.0.1:8002 cannot be reached from here (Network is unreachable)" ] || { echo "$why"; return 1; }
}

@test "report, DEBUGINFOD_URLS: a server that accepts and never answers: the request stops at its limit (10 s by default, --debuginfod-timeout, DEBUGINFOD_TIMEOUT), says so, and the next report asks again" {
  start_standin --silent "$D/empty"
  SECONDS=0
  run --separate-stderr timeout -k 5 40 "$LOCKSWAP" report "$D/known.json"
  assert_success
  local took=$SECONDS
  [ "${#stderr_lines[@]}" -eq 2 ] &&
    [ "${stderr_lines[0]}" = "lockswap report: $D/flame: asking debuginfod ($DEBUGINFOD_URLS) for its debug file, build-id $ID, for at most 10 s" ] &&
    [[ "${stderr_lines[1]}" =~ ^"lockswap report: $D/flame: no debug information here, and debuginfod did not get it (build-id $ID: timed out: $DEBUGINFOD_URLS accepted the connection but sent no answer in "1[0-2]\.[0-9]" s): its frames stay without file:line"$ ]] ||
    { echo "$stderr"; return 1; }
  [ "$took" -ge 10 ] && [ "$took" -le 25 ] || { echo "took $took s"; return 1; }
  [[ "$output" == *"flame+0x"* ]] || { echo "$output"; return 1; }
  # the option, then elfutils' variable; no mark of a failure in the cache:
  # each report asks again
  run --separate-stderr timeout -k 5 40 "$LOCKSWAP" report --debuginfod-timeout 2 "$D/known.json"
  assert_success
  [ "${stderr_lines[0]}" = "lockswap report: $D/flame: asking debuginfod ($DEBUGINFOD_URLS) for its debug file, build-id $ID, for at most 2 s" ] &&
    [[ "${stderr_lines[1]}" =~ "timed out: $DEBUGINFOD_URLS accepted the connection but sent no answer in "[23]\.[0-9]" s" ]] ||
    { echo "$stderr"; return 1; }
  DEBUGINFOD_TIMEOUT=1 run --separate-stderr timeout -k 5 40 "$LOCKSWAP" report "$D/known.json"
  assert_success
  [[ "${stderr_lines[0]}" == *"for at most 1 s" ]] || { echo "$stderr"; return 1; }
  [ "$(grep -c accepted "$T/requests")" -ge 3 ] || { cat "$T/requests"; return 1; }
}

@test "report, DEBUGINFOD_URLS: --debuginfod-budget bounds all requests together: the modules left after it are not asked, each said" {
  start_standin --silent "$D/empty"
  local prog lib
  prog=$(readelf -n "$B/symbols/symbols" | awk '/Build ID:/ { print $3 }')
  lib=$(readelf -n "$B/symbols/libsymbols.so" | awk '/Build ID:/ { print $3 }')
  SECONDS=0
  run --separate-stderr timeout -k 5 40 "$LOCKSWAP" report --debuginfod-timeout 5 --debuginfod-budget 2 "$D/symbols.json"
  assert_success
  [ "$SECONDS" -le 10 ] || { echo "took $SECONDS s"; return 1; }
  # the library first (modules by path), for the whole budget; the program not asked
  [ "${#stderr_lines[@]}" -eq 3 ] &&
    [ "${stderr_lines[0]}" = "lockswap report: $B/symbols/libsymbols.so: asking debuginfod ($DEBUGINFOD_URLS) for its debug file, build-id $lib, for at most 2 s" ] &&
    [[ "${stderr_lines[1]}" == "lockswap report: $B/symbols/libsymbols.so: no debug information here, and debuginfod did not get it (build-id $lib: timed out: "* ]] &&
    [ "${stderr_lines[2]}" = "lockswap report: $B/symbols/symbols: no debug information here, and debuginfod was not asked (build-id $prog): the budget of --debuginfod-budget for all requests is spent: its frames stay without file:line" ] ||
    { echo "$stderr"; return 1; }
}

@test "report: bad --debuginfod-timeout and --debuginfod-budget: one line naming the problem and the valid values, exit 2" {
  local v
  for v in "--debuginfod-timeout 0" "--debuginfod-timeout x" "--debuginfod-budget -1" "--debuginfod-budget 99999"; do
    eval "run --separate-stderr report $v \"\$D/known.json\""
    [ "$status" -eq 2 ] && [ -z "$output" ] && [ "${#stderr_lines[@]}" -eq 1 ] &&
      [[ "$stderr" == "lockswap report: --debuginfod-"*": invalid value "*" (valid: seconds, 0.1..3600)" ]] ||
      { echo "$v: status $status: $stderr"; return 1; }
  done
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
  [[ "$output" == *"start_thread+0x"*" (pthread_create.c:"* ]] || { echo "$output"; return 1; }
  [[ "$output" == *"cache_lookup+0x"*" (flame.c:"* ]] || { echo "$output"; return 1; }
  [ ! -s "$T/requests" ] || { cat "$T/requests"; return 1; }
}

# The functions of the symbols program and its library, as their debug files
# name them, in address order: "name address" lines.
functions_of() {
  nm "$1" | awk '$2 ~ /^[tTwW]$/ { print $3, $1 }' | sort -k2
}

@test "report: a frame is named only inside a function's extent: a stripped program and library that export a few functions around unexported code; the table, --folded and --svg never name that code after its exported neighbour" {
  # the modules are what this test needs: unexported creators between
  # exported functions, which stripping leaves in .dynsym alone
  local fp fl
  fp=$(functions_of "$B/symbols/debug/symbols.debug" | awk '{ print $1 }' | tr '\n' ' ')
  fl=$(functions_of "$B/symbols/debug/libsymbols.so.debug" | awk '{ print $1 }' | tr '\n' ' ')
  [[ "$fp" == *"sym_exported_first hidden_make hidden_take waiter sym_exported_make sym_exported_last "* ]] || { echo "$fp"; return 1; }
  [[ "$fl" == *"symlib_first lib_hidden_make lib_take symlib_make_hidden_path "* ]] || { echo "$fl"; return 1; }
  [ "$(nm -D --defined-only "$B/symbols/symbols" | awk '$2 == "T" { print $3 }' | sort | tr '\n' ' ')" = "sym_exported_first sym_exported_last sym_exported_make " ]
  nm -D "$B/symbols/libsymbols.so" | grep -q ' T symlib_first$'
  ! nm -D "$B/symbols/libsymbols.so" | grep -q lib_hidden_make
  # the unexported code's frames stay offsets, the exported creators are named
  run --separate-stderr report --top 0 "$D/symbols.json"
  assert_success
  local bad='sym_exported_first|sym_exported_last|symlib_first|symlib_last'
  ! grep -E "$bad" <<<"$output" || { echo "$output"; return 1; }
  assert_line --regexp '^ +2 .* sym_exported_make\+0x[0-9a-f]+ \(symbols\)$'
  assert_line --regexp '^ +4 .* symlib_make\+0x[0-9a-f]+ \(libsymbols.so\)$'
  assert_line --regexp '^ +1 .* symbols\+0x[0-9a-f]+$'
  assert_line --regexp '^ +3 .* libsymbols.so\+0x[0-9a-f]+$'
  run --separate-stderr report --folded "$D/symbols.json"
  assert_success
  ! grep -E "$bad" <<<"$output" || { echo "$output"; return 1; }
  assert_line --regexp '^clone3;start_thread;symbols\+0x[0-9a-f]+;symbols\+0x[0-9a-f]+;mutex #1 symbols\+0x[0-9a-f]+ [0-9]+$'
  assert_line --regexp '^clone3;start_thread;symbols\+0x[0-9a-f]+;symlib_take;libsymbols.so\+0x[0-9a-f]+;mutex #3 libsymbols.so\+0x[0-9a-f]+ [0-9]+$'
  assert_line --regexp ';mutex #2 sym_exported_make [0-9]+$'
  assert_line --regexp ';mutex #4 symlib_make [0-9]+$'
  run --separate-stderr report --svg "$T/s.svg" "$D/symbols.json"
  assert_success
  ! grep -E "$bad" "$T/s.svg" || return 1
  grep -q '<title>mutex #1 symbols+0x' "$T/s.svg" && grep -q '<title>sym_exported_make' "$T/s.svg" ||
    { grep '<title>' "$T/s.svg"; return 1; }
}

@test "report and LOCKSWAP_ALGO_MAP name functions alike: every function the report names as a mutex's creator, from the debug files in debuginfod's cache (no server), is a FUNCTION rule that chooses that mutex alone; C++ methods by their qualified names" {
  # the debug files where debuginfod's client keeps them, by build-id
  local m id
  for m in symbols libsymbols.so; do
    id=$(readelf -n "$B/symbols/$m" | awk '/Build ID:/ { print $3 }')
    mkdir -p "$T/cache/$id"
    cp "$B/symbols/debug/$m.debug" "$T/cache/$id/debuginfo"
  done
  run --separate-stderr report --top 0 "$D/symbols.json"
  assert_success
  [ -z "$stderr" ] || { echo "$stderr"; return 1; }
  local names
  names=$(grep -E '^ +[0-9]+ +[0-9]+ ' <<<"$output" | grep -oE '[A-Za-z_][A-Za-z0-9_:~.]*\+0x[0-9a-f]+ \([^)]*\)$' | sed 's/+0x.*//' | sort)
  [ "$(tr '\n' ' ' <<<"$names")" = "hidden_make lib_hidden_make sym_exported_make symlib_make " ] || { echo "$output"; return 1; }
  local n
  for n in $names; do
    run timeout -k 5 60 "$LOCKSWAP" -v -m "$n=mcs" -- "$B/symbols/symbols" known
    assert_success
    assert_line "lockswap: map: rule '$n=mcs': 1 mutexes -> mcs"
  done
  # C++: what the report prints for mangled names, and rules by those names
  timeout -k 5 60 "$LOCKSWAP" profile --top 0 -o "$T/cxx.json" -- "$PROGS/cxx_names" make
  run --separate-stderr report --top 0 "$T/cxx.json"
  assert_success
  names=$(grep -E '^ +[0-9]+ +[0-9]+ ' <<<"$output" | grep -oE '[A-Za-z_][A-Za-z0-9_:~.]*\+0x[0-9a-f]+ \([^)]*\)$' | sed 's/+0x.*//' | sort)
  [ "$(tr '\n' ' ' <<<"$names")" = "make_log store::Cache::Cache store::Cache::open " ] || { echo "$output"; return 1; }
  for n in $names; do
    run timeout -k 5 60 "$LOCKSWAP" -v -m "$n=mcs" -- "$PROGS/cxx_names" make
    assert_success
    assert_line "lockswap: map: rule '$n=mcs': 1 mutexes -> mcs"
  done
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
      want=$(/usr/bin/python3 -c 'import json, sys; print(sum(m[sys.argv[2]] for m in json.load(open(sys.argv[1]))["mutexes"]))' "$T/$a.json" "${w}_ns")
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
  # the SVG as a browser lays it out and draws it, in one Chromium run (its
  # start was most of this test's CPU): the file with a probe script added
  # at its end, which reads every frame's name, text width and box, clicks
  # to zoom and reads again, then clicks the root frame, which draws every
  # frame where it was (checked below: R), before the screenshot is taken
  local h
  h=$(grep -o 'height="[0-9]*"' "$T/f.svg" | head -1 | tr -dc 0-9)
  {
    sed '$d' "$T/f.svg"
    cat <<'EOF'
<metadata id="out"></metadata>
<script><![CDATA[
(function () {
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
function look(tag) {
  ['handler', 'hot_function', 'libx.so+0x309'].forEach(function (n) {
    var g = named(n), r = g.querySelector('rect');
    out.push([tag, n, g.style.display, (+r.getAttribute('x')).toFixed(1), (+r.getAttribute('width')).toFixed(1)].join('|'));
  });
}
named('handler').dispatchEvent(new MouseEvent('click'));
look('Z');
// a click on the root frame: back to the whole graph, for the screenshot
named('all').dispatchEvent(new MouseEvent('click'));
look('R');
document.getElementById('out').textContent = '\n' + out.join('\n') + '\n';
})();
]]></script>
</svg>
EOF
  } >"$T/probe.svg"
  chromium_run --window-size=1200,"$h" --dump-dom --screenshot="$T/f.png" "file://$T/probe.svg" >"$T/dom.html" ||
    { cat "$T/chromium.err"; return 1; }
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
  grep -qx 'Z|handler||10.0|1180.0' "$T/dom.html" && grep -qx 'Z|hot_function||10.0|1048.9' "$T/dom.html" &&
    grep -qx 'Z|libx.so+0x309|none|.*' "$T/dom.html" || { grep '^Z' "$T/dom.html"; return 1; }
  # and back: hot_function where it was drawn first, nothing hidden
  grep -qx "R|hot_function||$x|$w" "$T/dom.html" && ! grep -q '^R|[^|]*|none|' "$T/dom.html" ||
    { grep '^R' "$T/dom.html"; return 1; }
  # the SVG file, as a browser shows it: the hot frame's colour at the
  # middle of its box, the page's background above the graphs
  local fill px
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
