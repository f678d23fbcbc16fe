#!/usr/bin/env bats
# An algorithm per mutex (issue 22): LOCKSWAP_ALGO_MAP and LOCKSWAP_CONFIG
# rules, matched once per mutex from its creation stack (interpose/bind*.c,
# match/). tests/progs/algo_map.c makes mutexes in known places; the library
# says under LOCKSWAP_VERBOSE how many mutexes each rule chose, and the
# profile names each mutex's algorithm and rule.
load helpers
bats_require_minimum_version 1.5.0
TEST_TIMEOUT=30
P="$PROGS/algo_map"
NODEBUG="$B/algo-map/algo_map_nodebug"
STRIPPED="$B/algo-map/algo_map_stripped"
NOSYMS="$B/algo-map/algo_map_nosyms"
DL="$B/algo-map/libalgo_map_dl.so"

# mapped MAP [VAR=VALUE...] PROG ARGS...: run with the map and LOCKSWAP_VERBOSE; output:
# the program's and the library's report lines. The '*' rule (or no rule)
# also counts the few mutexes the matcher's own work uses (libunwind's),
# bound without a walk: at least the program's.
mapped() {
  local map=$1
  shift
  "$RUN_LIMIT" -k 5 "$TEST_TIMEOUT" LD_PRELOAD="$LIB" LOCKSWAP_VERBOSE=1 LOCKSWAP_ALGO_MAP="$map" "$@" 2>&1
}

@test "glibc itself passes every algo_map case (the program is the specification)" {
  for c in functions static lines fork race cond timeouts queues; do
    run timeout 20 "$P" "$c"
    [ "$status" -eq 0 ] || { echo "native $c: $output"; return 1; }
  done
  timeout 20 "$P" module "$DL" >/dev/null
  timeout 20 "$P" many 1000
}

@test "FUNCTION rules: pthread_mutex_init from make_hot and make_cold (static functions), with and without debug information; mutual exclusion holds" {
  for prog in "$P" "$NODEBUG"; do
    run mapped 'make_hot=mcs,make_cold=alock,*=tas' "$prog" functions
    assert_success
    assert_line "lockswap: map: rule 'make_hot=mcs': 3 mutexes -> mcs"
    assert_line "lockswap: map: rule 'make_cold=alock': 5 mutexes -> alock"
  done
  # the first rule that names a frame wins: make_hot's mutexes also have
  # functions() on their stacks
  run mapped 'make_hot=clh,functions=ticket' "$P" functions
  assert_line "lockswap: map: rule 'make_hot=clh': 3 mutexes -> clh"
  assert_line "lockswap: map: rule 'functions=ticket': 5 mutexes -> ticket"
}

@test "FILE:LINE rules: with the program's DWARF, with a separate debug file (.gnu_debuglink), and without debug information (no mutex, said at exit)" {
  local line
  line=$("$P" lines | sed -n 's/^line: //p')
  [ -n "$line" ]
  for prog in "$P" "$STRIPPED"; do
    run mapped "algo_map.c:$line=mcs" "$prog" lines
    assert_success
    assert_line "lockswap: map: rule 'algo_map.c:$line=mcs': 1 mutexes -> mcs"
    # the end of a path matches too; another line does not
    run mapped "progs/algo_map.c:$line=mcs,algo_map.c:$((line + 1))=tas" "$prog" lines
    assert_line "lockswap: map: rule 'progs/algo_map.c:$line=mcs': 1 mutexes -> mcs"
    assert_line --partial "lockswap: map: rule 'algo_map.c:$((line + 1))=tas' matched no mutex"
  done
  run mapped "algo_map.c:$line=mcs" "$NODEBUG" lines
  assert_success
  assert_line "lockswap: map: rule 'algo_map.c:$line=mcs' matched no mutex (no line information for algo_map.c in the loaded modules (built without -g, and no debug file found?))"
}

@test "MODULE rules: the mutexes a dlopen'ed library makes; a program by path" {
  run mapped 'libalgo_map_dl.so=mcs,make_hot=clh' "$P" module "$DL"
  assert_success
  assert_line "lockswap: map: rule 'libalgo_map_dl.so=mcs': 4 mutexes -> mcs"
  assert_line "lockswap: map: rule 'make_hot=clh': 1 mutexes -> clh"
  run mapped 'progs/algo_map=ticket' "$P" functions
  assert_line "lockswap: map: rule 'progs/algo_map=ticket': 8 mutexes -> ticket"
  run mapped 'libnothere.so=mcs' "$P" functions
  assert_line "lockswap: map: rule 'libnothere.so=mcs' matched no mutex (no module libnothere.so is loaded)"
}

@test "MODULE+0xOFFSET rules, for a program without symbols: lockswap report --map proposes them from a profile, and they choose those mutexes" {
  local j="$BATS_TEST_TMPDIR/p.json"
  run env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=pthread LOCKSWAP_PROFILE=1 LOCKSWAP_PROFILE_TOP=0 LOCKSWAP_PROFILE_OUT="$j" "$NOSYMS" timeouts
  assert_success
  run "$B/lockswap-report" "$j" --map --algo mcs
  assert_success
  local line
  line=$(tail -1 <<<"$output")
  [[ "$line" =~ ^LOCKSWAP_ALGO_MAP=\'algo_map_nosyms\+0x[0-9a-f]+=mcs,algo_map_nosyms\+0x[0-9a-f]+=mcs,\*=pthread\'$ ]] || { echo "$output"; false; }
  run env LD_PRELOAD="$LIB" LOCKSWAP_VERBOSE=1 "${line//\'/}" "$NOSYMS" functions
  assert_success
  assert_line --regexp "^lockswap: map: rule 'algo_map_nosyms\+0x[0-9a-f]+=mcs': 3 mutexes -> mcs$"
  assert_line --regexp "^lockswap: map: rule 'algo_map_nosyms\+0x[0-9a-f]+=mcs': 5 mutexes -> mcs$"
  # function names are gone with the symbols: said at exit
  run mapped 'make_hot=mcs' "$NOSYMS" functions
  assert_line "lockswap: map: rule 'make_hot=mcs' matched no mutex (no function named make_hot in the program or its loaded libraries)"
}

@test "defaults: '*' takes every mutex no rule names; without it LOCKSWAP_ALGO's algorithm (pthread: glibc's mutex per mutex)" {
  run mapped 'make_hot=mcs,*=clh' "$P" functions
  assert_line --regexp "^lockswap: map: rule '\*=clh': ([5-9]|[1-9][0-9]) mutexes -> clh$"
  refute_line --partial "no rule:"
  run mapped make_hot=mcs LOCKSWAP_ALGO=hemlock "$P" functions
  assert_success
  assert_line --regexp "^lockswap: map: no rule: ([5-9]|[1-9][0-9]) mutexes -> hemlock$"
  run mapped make_hot=mcs LOCKSWAP_ALGO=pthread "$P" functions
  assert_success
  assert_line --regexp "^lockswap: map: no rule: ([5-9]|[1-9][0-9]) mutexes -> pthread$"
  assert_line "lockswap: map: rule 'make_hot=mcs': 3 mutexes -> mcs"
  run mapped 'no_such_function=mcs,*=tas' "$P" functions
  assert_line "lockswap: map: rule 'no_such_function=mcs' matched no mutex (no function named no_such_function in the program or its loaded libraries)"
}

@test "without LOCKSWAP_VERBOSE: at exit, one line for each rule that matched no lock (a typo, a stale offset), none for a rule that matched; once, though the program forks" {
  run --separate-stderr "$RUN_LIMIT" -k 5 "$TEST_TIMEOUT" LD_PRELOAD="$LIB" \
    LOCKSWAP_ALGO_MAP='make_hot=mcs,cache_inti=mcs,algo_map+0x12345=ticket' "$P" functions
  assert_success
  [ "$stderr" = "lockswap: map: rule 'cache_inti=mcs' matched no mutex (no function named cache_inti in the program or its loaded libraries)
lockswap: map: rule 'algo_map+0x12345=ticket' matched no mutex (no lock was created by a call that returns to algo_map+0x12345)" ] ||
    { echo "$stderr"; return 1; }
  # through lockswap -m; every rule matched: nothing at all
  run --separate-stderr timeout -k 5 "$TEST_TIMEOUT" "$LOCKSWAP" -m 'make_hot=mcs,make_hto=clh' -- "$P" functions
  assert_success
  [ "$stderr" = "lockswap: map: rule 'make_hto=clh' matched no mutex (no function named make_hto in the program or its loaded libraries)" ] ||
    { echo "$stderr"; return 1; }
  run --separate-stderr timeout -k 5 "$TEST_TIMEOUT" "$LOCKSWAP" -m 'make_hot=mcs,make_cold=clh' -- "$P" functions
  assert_success
  [ -z "$stderr" ] || { echo "$stderr"; return 1; }
  # the child that exits after fork has its parent's counts: the parent alone says it
  run --separate-stderr timeout -k 5 "$TEST_TIMEOUT" "$LOCKSWAP" -m 'make_hot=mcs,nothing_here=clh' -- "$P" fork
  assert_success
  [ "$stderr" = "lockswap: map: rule 'nothing_here=clh' matched no mutex (no function named nothing_here in the program or its loaded libraries)" ] ||
    { echo "$stderr"; return 1; }
}

@test "static initialisers and zeroed memory: matched at their first use (lock, trylock), from that use's stack; first users racing: each static mutex gets one binding, whoever wins (64 mutexes, two threads each)" {
  run mapped 'use_hot=mcs,use_cold=alock' "$P" static
  assert_success
  assert_line "lockswap: map: rule 'use_hot=mcs': 3 mutexes -> mcs"
  assert_line "lockswap: map: rule 'use_cold=alock': 5 mutexes -> alock"
  run mapped 'use_hot=mcs,use_cold=alock' "$P" race
  assert_success
  local hot cold
  [[ "$output" =~ "rule 'use_hot=mcs': "([0-9]+)" mutexes" ]] && hot=${BASH_REMATCH[1]}
  [[ "$output" =~ "rule 'use_cold=alock': "([0-9]+)" mutexes" ]] && cold=${BASH_REMATCH[1]}
  [ "$(( ${hot:-0} + ${cold:-0} ))" -eq 64 ] || { echo "$output"; false; }
}

@test "fork: the child keeps its parent's bindings and matches the mutexes it makes" {
  run mapped 'make_hot=mcs,use_cold=alock' "$P" fork
  assert_success
  # the child's report (3 from make_hot: 1 inherited, 2 its own), then the parent's
  assert_line "lockswap: map: rule 'make_hot=mcs': 3 mutexes -> mcs"
  assert_line "lockswap: map: rule 'use_cold=alock': 1 mutexes -> alock"
  assert_line "lockswap: map: rule 'make_hot=mcs': 1 mutexes -> mcs"
}

# Queue nodes of several algorithms in one process (pool.h, "Node classes"):
# tests/unit/node_class.c, deterministic, shows that an algorithm never takes
# a node another freed, nor gives one of its own to another; `queues` runs
# two queue locks of different algorithms side by side (clh-tp beside
# clh-try hung in about 1 run in 12 when the pool had one class for all).
@test "queue nodes: each algorithm that takes them reuses only its own (every mutex and rwlock algorithm with queue nodes); two queue locks of different algorithms in one program, each beside the next in the list and clh-tp beside clh-try both ways: exclusion, no hang" {
  run timeout -k 5 "$(hang_timeout)" "$UNIT/node_class" -a all
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  local names=() i a b failed=()
  mapfile -t names < <("$LOCKSWAP" --names --cap qnode)
  [ "${#names[@]}" -ge 10 ] || { echo "only ${#names[@]} algorithms with queue nodes"; return 1; }
  local pairs=("clh-tp clh-try" "clh-try clh-tp")
  for i in "${!names[@]}"; do
    pairs+=("${names[$i]} ${names[$(( (i + 1) % ${#names[@]} ))]}")
  done
  for i in "${pairs[@]}"; do
    read -r a b <<<"$i"
    "$RUN_LIMIT" -k 5 "$(hang_timeout)" LD_PRELOAD="$LIB" LOCKSWAP_WAIT=park \
      LOCKSWAP_ALGO_MAP="make_hot=$a,make_cold=$b" "$P" queues 600 >"$BATS_TEST_TMPDIR/out" 2>&1 ||
      { failed+=("$a+$b"); tail -3 "$BATS_TEST_TMPDIR/out"; }
  done
  [ "${#failed[@]}" -eq 0 ] || { echo "failed: ${failed[*]}"; return 1; }
}

@test "a condvar used in turn with mutexes of different algorithms (inline, out-of-line, time-published, glibc's)" {
  for m in 'make_hot=mcs-tp,make_cold=alock' 'make_hot=pthread,make_cold=clh' 'make_hot=hmcs,make_cold=cal-fp'; do
    run mapped "$m" "$P" cond
    assert_success
    assert_line --regexp "^lockswap: map: rule 'make_hot=[a-z-]+': 1 mutexes"
    assert_line --regexp "^lockswap: map: rule 'make_cold=[a-z-]+': 1 mutexes"
  done
}

# The cases of a program run in one process (as gcr.bats runs them), but
# fork's in two groups and passthrough's one by one,
# whose cases share process state; under the hang timeout, not one case's.
# mutex_memory (thousands of mutexes made, a stack walk each: most of this
# test's time) under the first map only: its memory is the binding's, the
# same code whichever algorithms the map names; with a fifth of its
# repetitions (TEST_ITERS_PERCENT=20: 20,000 mutexes, each bound by a walk;
# mutex-memory.bats runs them all). passthrough under the first map only:
# its mutexes (robust, process-shared, PI, PP) are glibc's before any rule
# is looked at (mutex.c, init_mutex); and fork (thousands of forks): what a
# map adds to it is the binding table across fork, one path whatever the
# rules name (fork.bats runs every algorithm, the test "fork: ..." above
# the child's bindings). The loop untraced (helpers.bash: bats' trap on
# every command cost as much as the runs).
@test "every end-to-end program passes with a map that gives its mutexes different algorithms" {
  untraced e2e_mapped
}
e2e_mapped() {
  local maps=('main=alock,*=hmcs' 'main=pthread,*=clh-tp+gcr') m j out main=0 rest=0 runs=0 failed=() jobs=() p pct limit
  for p in async_cancel cancel cond_users condvar cross_unlock cxx_sync mutex_errors mutex_types static_init; do
    jobs+=("$p $("$PROGS/$p" 2>&1 | sed -n 's/^cases://p')")
  done
  jobs+=("fork held owner busy" "fork atfork" "mutex_memory copy reuse many many-held nested threads")
  for p in $("$PROGS/passthrough" 2>&1 | sed -n 's/^cases://p'); do jobs+=("passthrough $p"); done
  limit=$(hang_timeout)
  # a rule that bound a mutex (bash's own match: a grep is a process)
  local re_main="(^|"$'\n'")lockswap: map: rule 'main=[^']*': [1-9]" re_rest="(^|"$'\n'")lockswap: map: rule '[*]=[^']*': [1-9]"
  for m in "${maps[@]}"; do
    for j in "${jobs[@]}"; do
      pct=100
      [[ "$j" == mutex_memory* ]] && pct=20
      [[ "$j" == mutex_memory* || "$j" == passthrough* || "$j" == fork* ]] && [ "$m" != "${maps[0]}" ] && continue
      # shellcheck disable=SC2086
      out=$(TEST_ITERS_PERCENT=$pct TEST_TIMEOUT=$limit mapped "$m" "$PROGS"/$j) || failed+=("$m $j: $(tail -3 <<<"$out")")
      runs=$((runs + 1))
      [[ "$out" =~ $re_main ]] && main=$((main + 1))
      [[ "$out" =~ $re_rest ]] && rest=$((rest + 1))
    done
  done
  [ ${#failed[@]} -eq 0 ] || { printf '%s\n' "${failed[@]}"; return 1; }
  # the maps did split the mutexes between the two rules, in most runs
  [ $((main * 2)) -gt "$runs" ] && [ $((rest * 2)) -gt "$runs" ] || { echo "main=$main rest=$rest of $runs runs"; return 1; }
}

@test "100,000 mutexes from one place: one stack walk each, their return addresses resolved once" {
  run mapped 'make_one=mcs' "$P" many 100000
  assert_success
  assert_line "lockswap: map: rule 'make_one=mcs': 100000 mutexes -> mcs"
  local walks resolved
  walks=$(sed -n 's/^lockswap: map: [0-9]* mutexes bound, \([0-9]*\) stack walks.*/\1/p' <<<"$output")
  resolved=$(sed -n 's/.* without a walk, \([0-9]*\) return addresses resolved$/\1/p' <<<"$output")
  [ "$walks" -eq 100000 ] && [ "$resolved" -lt 64 ] || { echo "walks=$walks resolved=$resolved"; false; }
}

# instructions per lock+unlock pair of bench-pairs (callgrind): two rounds
# of 100,000 pairs, a dump after each (--dump-after=pairs); the second dump
# holds the second round alone (the binding and every first-use cost are in
# the first), plus the few instructions of the round's own loop (76 here):
# lock_pair_cost KIND (mutex, rd, wr) VAR=VALUE...
lock_pair_cost() {
  local kind=$1 cg l s=
  shift
  cg="$BATS_TEST_TMPDIR/cg.$kind.$RANDOM$RANDOM"
  env LD_PRELOAD="$LIB" LOCKSWAP_CLUSTER=thread:1 "$@" valgrind --tool=callgrind --callgrind-out-file="$cg" \
    --dump-after=pairs "$B/bench-pairs" --lock "$kind" 100000 2 >/dev/null 2>&1 || return 1
  # (read by bash: a sed is a process, and the test's directory goes with it)
  while read -r l; do [[ "$l" == "summary: "* ]] && s=${l#summary: }; done <"$cg.2"
  [ -n "$s" ] || return 1
  echo $(((s + 50000) / 100000))
}

pair_cost() {
  lock_pair_cost mutex "$@"
}

@test "cost: a bound mutex's uncontended pair costs at most 5 instructions more than the same algorithm alone, and no matching runs per call" {
  command -v valgrind >/dev/null || skip "valgrind is not installed"
  local a alone map
  for a in ttas alock; do
    alone=$(pair_cost LOCKSWAP_ALGO="$a")
    map=$(pair_cost LOCKSWAP_ALGO_MAP="main=$a")
    echo "$a: alone $alone, mapped $map"
    [ "$map" -gt "$alone" ] && [ "$map" -le $((alone + 5)) ]
  done
  # matching is once per mutex, not per call: as many walks for 100 pairs as for 100,000
  local w1 w2
  w1=$(mapped main=ttas "$B/bench-pairs" 100 | sed -n 's/.* bound, \([0-9]*\) stack walks.*/\1/p')
  w2=$(mapped main=ttas "$B/bench-pairs" 100000 | sed -n 's/.* bound, \([0-9]*\) stack walks.*/\1/p')
  [ -n "$w1" ] && [ "$w1" = "$w2" ] || { echo "walks: $w1 vs $w2"; false; }
}

@test "no room below 4 GiB for the table: the dispatch goes by offset, one instruction more per call, and works" {
  local low="$B/algo-map/liblowfill.so" c
  for c in functions race cond; do
    run timeout 30 env LD_PRELOAD="$LIB $low" LOCKSWAP_VERBOSE=1 LOCKSWAP_ALGO_MAP='make_hot=mcs,make_cold=alock,use_hot=clh,use_cold=alock' "$P" "$c"
    assert_success
    assert_line "lockswap: map: 4 rules from LOCKSWAP_ALGO_MAP; dispatch by offset (no room below 4 GiB: one instruction more per call)"
  done
  assert_line --regexp "^lockswap: map: rule 'make_cold=alock': 1 mutexes -> alock$"
  # the dispatchers, as compiled, to their jump: 2 instructions by address, 3 by offset
  # (valgrind keeps the low addresses for itself: callgrind cannot see the
  # second kind)
  command -v objdump >/dev/null || skip "objdump is not installed"
  local f n
  for f in lock trylock unlock; do
    n=$(objdump -d --no-show-raw-insn "$LIB" | awk -v f="<near_$f>:" '$2 == f { on = 1; next } on { k++ } on && $2 == "jmp" { exit } END { print k }')
    [ "$n" -eq 2 ] || { echo "near_$f: $n instructions"; false; }
    n=$(objdump -d --no-show-raw-insn "$LIB" | awk -v f="<far_$f>:" '$2 == f { on = 1; next } on { k++ } on && $2 == "jmp" { exit } END { print k }')
    [ "$n" -eq 3 ] || { echo "far_$f: $n instructions"; false; }
  done
}

@test "validation: a malformed rule, an unknown algorithm, a waiting policy, two '*', both variables: one line, exit 2 before main" {
  local m
  for m in 'foo' '=mcs' 'foo=' 'a b=mcs' 'foo=nosuch' 'foo=mcs/spin' '*=mcs,*=tas' 'x.c:0=mcs' ','; do
    run --separate-stderr env LD_PRELOAD="$LIB" LOCKSWAP_ALGO_MAP="$m" "$PROGS/hello"
    [ "$status" -eq 2 ] && [ -z "$output" ] && [ "${#stderr_lines[@]}" -eq 1 ] ||
      { echo "[$m] status $status: $output / $stderr"; false; }
    [[ "$stderr" == "lockswap: LOCKSWAP_ALGO_MAP: "* ]]
  done
  run --separate-stderr env LD_PRELOAD="$LIB" LOCKSWAP_ALGO_MAP='foo=nosuch' "$PROGS/hello"
  assert_equal "${stderr%% (valid*}" "lockswap: LOCKSWAP_ALGO_MAP: rule 'foo=nosuch': unknown algorithm 'nosuch'"
  run --separate-stderr env LD_PRELOAD="$LIB" LOCKSWAP_ALGO_MAP='foo=mcs/spin' "$PROGS/hello"
  [[ "$stderr" == *"a waiting policy per lock is not supported"*"LOCKSWAP_WAIT" ]]
  run --separate-stderr env LD_PRELOAD="$LIB" LOCKSWAP_ALGO_MAP='*=mcs' LOCKSWAP_CONFIG=/dev/null "$PROGS/hello"
  [ "$status" -eq 2 ] && [ "$stderr" = "lockswap: LOCKSWAP_ALGO_MAP and LOCKSWAP_CONFIG are both set (valid: one of them)" ]
}

@test "LOCKSWAP_CONFIG: rules from a file, '#' comments, errors with FILE:LINE; lockswap -m and --config" {
  local f="$BATS_TEST_TMPDIR/rules"
  printf '# the hot ones\nmake_hot=mcs   # init\n\nmake_cold=alock, *=tas\n' >"$f"
  run env LD_PRELOAD="$LIB" LOCKSWAP_VERBOSE=1 LOCKSWAP_CONFIG="$f" "$P" functions
  assert_success
  assert_line "lockswap: map: rule 'make_hot=mcs': 3 mutexes -> mcs"
  assert_line "lockswap: map: rule 'make_cold=alock': 5 mutexes -> alock"
  run "$LOCKSWAP" --config "$f" -v -- "$P" functions
  assert_line "lockswap: map: rule '*=tas': 5 mutexes -> tas"
  run "$LOCKSWAP" -m 'make_cold=ticket' -v -- "$P" functions
  assert_line "lockswap: map: rule 'make_cold=ticket': 5 mutexes -> ticket"
  printf 'make_hot=mcs\nmake_cold=nosuch\n' >"$f"
  run --separate-stderr env LD_PRELOAD="$LIB" LOCKSWAP_CONFIG="$f" "$PROGS/hello"
  [ "$status" -eq 2 ] && [[ "$stderr" == "lockswap: LOCKSWAP_CONFIG $f:2: rule 'make_cold=nosuch': unknown algorithm"* ]]
}

@test "visible: the profile (table and JSON) names each mutex's algorithm and rule; lockswap report --map turns a profile into rules that work" {
  local j="$BATS_TEST_TMPDIR/p.json"
  run env LD_PRELOAD="$LIB" LOCKSWAP_PROFILE=1 LOCKSWAP_PROFILE_OUT="$j" LOCKSWAP_ALGO_MAP='make_hot=mcs,*=alock' "$P" functions
  assert_success
  assert_output --partial "algorithm per mutex (rules; no rule: alock)"
  assert_output --partial "init, mcs by rule make_hot=mcs"
  assert_output --partial "init, alock by rule *=alock"
  [ "$(grep -o '"algorithm":"mcs","rule":"make_hot=mcs"' "$j" | wc -l)" -eq 3 ]
  [ "$(grep -o '"algorithm":"alock","rule":"\*=alock"' "$j" | wc -l)" -eq 5 ]
  # the report reads them back
  run "$B/lockswap-report" "$j" --top 0
  assert_output --partial "init, mcs by rule make_hot=mcs"
  # a profile under glibc's mutex: rules for its contended mutexes (every
  # one of `timeouts`, whatever the timing)
  run env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=pthread LOCKSWAP_PROFILE=1 LOCKSWAP_PROFILE_TOP=0 LOCKSWAP_PROFILE_OUT="$j" "$P" timeouts
  run "$B/lockswap-report" "$j" --map --algo mcs
  assert_success
  assert_line "LOCKSWAP_ALGO_MAP='make_hot=mcs,make_cold=mcs,*=pthread'" ||
    assert_line "LOCKSWAP_ALGO_MAP='make_cold=mcs,make_hot=mcs,*=pthread'"
  local line
  line=$(tail -1 <<<"$output")
  run env LD_PRELOAD="$LIB" LOCKSWAP_VERBOSE=1 "${line//\'/}" "$P" functions
  assert_line "lockswap: map: rule 'make_hot=mcs': 3 mutexes -> mcs"
  assert_line "lockswap: map: rule 'make_cold=mcs': 5 mutexes -> mcs"
}

# ---- rwlocks (tests/progs/rwlock_map.c): a rule's algorithm decides the
# family it applies to (rwlock names: lockswap --names rwlock; pthread: both)
RW="$PROGS/rwlock_map"

@test "rwlocks: glibc itself passes every rwlock_map case (the program is the specification)" {
  local c
  for c in functions static lines fork; do
    run timeout "$(hang_timeout 20)" "$RW" "$c"
    [ "$status" -eq 0 ] || { echo "native $c: $output"; return 1; }
  done
  timeout "$(hang_timeout 20)" "$RW" module "$DL" >/dev/null
}

# every_rwalgo_by_function: the loop of the test below, untraced
# (helpers.bash), each failure returned at once
every_rwalgo_by_function() {
  local a
  for a in $(rwalgos); do
    [ "$a" != pthread ] || continue # (below: glibc's rwlock, as every other rwlock)
    run mapped "rw_make_hot=$a,mx_make=mcs,*=ttas" "$RW" functions
    assert_success || return 1
    assert_line "lockswap: map: rule 'rw_make_hot=$a': 2 rwlocks -> $a" || return 1
    assert_line "lockswap: map: rule 'mx_make=mcs': 2 mutexes -> mcs" || return 1
    # '*=ttas' is the mutexes' default only: the other rwlocks keep
    # LOCKSWAP_RWALGO's (pthread: glibc's rwlock, per rwlock)
    refute_line --partial "rwlocks -> ttas" || return 1
    assert_line "lockswap: map: no rule: 3 rwlocks -> pthread" || return 1
  done
}

@test "rwlocks: FUNCTION rules choose the rwlock algorithm of the rwlocks made there, for every rwlock algorithm; mutex rules beside them in one program; '*' per family" {
  untraced every_rwalgo_by_function
  # an rwlock rule and a mutex rule for one place, and a '*' for each family
  run mapped 'rw_make_cold=mcs,rw_make_cold=pf-t,*=mcs-rw,*=tas' "$RW" functions
  assert_success
  assert_line "lockswap: map: rule 'rw_make_cold=pf-t': 3 rwlocks -> pf-t"
  assert_line "lockswap: map: rule 'rw_make_cold=mcs' matched no mutex"
  assert_line "lockswap: map: rule '*=mcs-rw': 2 rwlocks -> mcs-rw"
  assert_line --regexp "^lockswap: map: rule '\*=tas': [2-9] mutexes -> tas$"
  # pthread is both families' name: glibc's own lock for either
  run mapped 'rw_make_hot=pthread,*=pf-t' LOCKSWAP_RWALGO=central "$RW" functions
  assert_success
  assert_line "lockswap: map: rule 'rw_make_hot=pthread': 2 rwlocks -> pthread"
  assert_line "lockswap: map: rule '*=pf-t': 3 rwlocks -> pf-t"
  # without '*': LOCKSWAP_RWALGO's algorithm
  run mapped 'rw_make_hot=pf-t' LOCKSWAP_RWALGO=central "$RW" functions
  assert_line "lockswap: map: no rule: 3 rwlocks -> central"
  # no rwlock rule, or only pthread ones while LOCKSWAP_RWALGO is glibc's:
  # the rwlocks run as without a map
  run mapped 'mx_make=mcs' "$RW" functions
  assert_success
  refute_line --partial "rwlocks"
  run mapped 'rw_make_hot=pthread' "$RW" functions
  assert_success
  assert_line "lockswap: map: every rwlock rule names pthread, as LOCKSWAP_RWALGO does: every rwlock is glibc's"
  refute_line --partial "rwlocks bound"
}

@test "rwlocks: every rwlock_semantics case (the rwlock specification) passes with its rwlocks bound by a rule, for every rwlock algorithm, and for glibc's rwlock per rwlock" {
  untraced rwsem_mapped
}
rwsem_mapped() {
  local a arg failed=() excl
  excl=" $(rwalgos exclusive | tr '\n' ' ') "
  for a in $(rwalgos); do
    arg=all
    [[ "$excl" == *" $a "* ]] && arg=exclusive-ok
    # pthread: glibc's rwlock, kept out of line, behind the shim (the
    # others' default central, so that the map is on)
    run timeout "$(hang_timeout 30)" env LD_PRELOAD="$LIB" LOCKSWAP_RWALGO=central LOCKSWAP_ALGO_MAP="*=$a" \
      "$PROGS/rwlock_semantics" "$arg"
    [ "$status" -eq 0 ] || { failed+=("$a"); echo "=== $a: $output" | tail -n 5; }
  done
  [ ${#failed[@]} -eq 0 ] || { echo "failed under: ${failed[*]}"; return 1; }
}

@test "rwlocks: FILE:LINE and MODULE rules (a dlopen'ed library's rwlocks, a program by path)" {
  local line
  line=$("$RW" lines | sed -n 's/^line: //p')
  [ -n "$line" ]
  run mapped "rwlock_map.c:$line=mcs-rw" "$RW" lines
  assert_success
  assert_line "lockswap: map: rule 'rwlock_map.c:$line=mcs-rw': 1 rwlocks -> mcs-rw"
  run mapped "rwlock_map.c:$((line + 1))=mcs-rw" "$RW" lines
  assert_line --partial "lockswap: map: rule 'rwlock_map.c:$((line + 1))=mcs-rw' matched no rwlock"
  run mapped 'libalgo_map_dl.so=c-rw-wp,rw_make_hot=central-wp' "$RW" module "$DL"
  assert_success
  assert_line "lockswap: map: rule 'libalgo_map_dl.so=c-rw-wp': 4 rwlocks -> c-rw-wp"
  assert_line "lockswap: map: rule 'rw_make_hot=central-wp': 1 rwlocks -> central-wp"
  # a program by path
  run mapped 'progs/rwlock_map=pf-t+bravo' "$RW" functions
  assert_line "lockswap: map: rule 'progs/rwlock_map=pf-t+bravo': 5 rwlocks -> pf-t+bravo"
}

@test "rwlocks: static initialisers and zeroed memory are matched at their first use (rdlock, tryrdlock); fork: the child keeps its parent's bindings and matches the rwlocks it makes" {
  run mapped 'rw_use_hot=mcs-rw+bravo,rw_use_cold=central' "$RW" static
  assert_success
  assert_line "lockswap: map: rule 'rw_use_hot=mcs-rw+bravo': 2 rwlocks -> mcs-rw+bravo"
  assert_line "lockswap: map: rule 'rw_use_cold=central': 3 rwlocks -> central"
  run mapped 'rw_make_hot=pf-t,rw_use_cold=mcs-rw' "$RW" fork
  assert_success
  # the parent's report, then the child's (it exits through exit(): its own
  # report at exit, with the parent's binding counted before the fork)
  assert_line "lockswap: map: rule 'rw_make_hot=pf-t': 3 rwlocks -> pf-t"
  assert_line "lockswap: map: rule 'rw_use_cold=mcs-rw': 1 rwlocks -> mcs-rw"
  assert_line "lockswap: map: rule 'rw_make_hot=pf-t': 1 rwlocks -> pf-t"
}

# An rwlock whose state is inline is dispatched by one path whatever its
# algorithm (bind_rwlock.c: rdlock_fast_map and the others jump to the
# bound entry's own operations): pf-t for every such algorithm (mcs-rw, its
# other one until issue 35, takes the same instructions around its own)
@test "rwlocks cost: a bound rwlock's uncontended rdlock+unlock and wrlock+unlock pairs cost at most 5 instructions more than the same algorithm alone" {
  command -v valgrind >/dev/null || skip "valgrind is not installed"
  local a=pf-t k alone map
  for k in rd wr; do
    alone=$(lock_pair_cost "$k" LOCKSWAP_RWALGO="$a")
    map=$(lock_pair_cost "$k" LOCKSWAP_ALGO_MAP="main=$a")
    echo "$a $k: alone $alone, mapped $map"
    [ "$map" -gt "$alone" ] && [ "$map" -le $((alone + 5)) ]
  done
}

@test "rwlocks: no room below 4 GiB for their table: they dispatch by offset through the general entries, and work (the rwlock specification too)" {
  local low="$B/algo-map/liblowfill.so" c
  for c in functions static; do
    run timeout "$(hang_timeout 30)" env LD_PRELOAD="$LIB $low" LOCKSWAP_VERBOSE=1 \
      LOCKSWAP_ALGO_MAP='rw_make_hot=mcs-rw+bravo,rw_make_cold=pf-t,rw_use_hot=c-rw-wp,rw_use_cold=central' "$RW" "$c"
    assert_success
    assert_line "lockswap: map: rwlocks dispatch by offset (no room below 4 GiB: more instructions per call)"
  done
  assert_line "lockswap: map: rule 'rw_use_cold=central': 3 rwlocks -> central"
  run timeout "$(hang_timeout 30)" env LD_PRELOAD="$LIB $low" LOCKSWAP_RWALGO=central LOCKSWAP_ALGO_MAP='*=mcs-rw+bravo' \
    "$PROGS/rwlock_semantics" all
  assert_success
}

@test "rwlocks: bad rules: a spinlock algorithm, an unknown name (both families listed), a second '*' of a family, the other family's wrapper: one line, exit 2 before main" {
  local m
  for m in 'x=ticket16' 'x=nosuch' '*=pf-t,*=mcs-rw' '*=pthread,*=central' 'x=mcs+bravo' 'x=pf-t+gcr' 'x=bravo' 'x=pf-t/spin'; do
    run --separate-stderr env LD_PRELOAD="$LIB" LOCKSWAP_ALGO_MAP="$m" "$PROGS/hello"
    [ "$status" -eq 2 ] && [ -z "$output" ] && [ "${#stderr_lines[@]}" -eq 1 ] ||
      { echo "[$m] status $status: $output / $stderr"; false; }
    [[ "$stderr" == "lockswap: LOCKSWAP_ALGO_MAP: rule '"* ]]
  done
  run --separate-stderr env LD_PRELOAD="$LIB" LOCKSWAP_ALGO_MAP='x=ticket16' "$PROGS/hello"
  assert_equal "$stderr" "lockswap: LOCKSWAP_ALGO_MAP: rule 'x=ticket16': ticket16 is a spinlock algorithm, and spinlocks take no rules (a pthread_spinlock_t has 4 bytes, all the lock's: no room for a binding; LOCKSWAP_SPINALGO chooses for every spinlock)"
  run --separate-stderr env LD_PRELOAD="$LIB" LOCKSWAP_ALGO_MAP='x=nosuch' "$PROGS/hello"
  [[ "$stderr" == *"unknown algorithm 'nosuch' (valid: mutexes: pthread, auto, "*"; rwlocks: pthread, mutex, "*"pf-t"* ]]
  run --separate-stderr env LD_PRELOAD="$LIB" LOCKSWAP_ALGO_MAP='*=pthread,*=central' "$PROGS/hello"
  assert_equal "$stderr" "lockswap: LOCKSWAP_ALGO_MAP: rule '*=central': a second '*' rule for rwlocks (the first: '*=pthread')"
  # a mutex algorithm that is also a spinlock's (ttas) is a mutex rule
  run mapped 'x=ttas' "$PROGS/hello"
  assert_success
}

@test "rwlocks visible: the profile (table, JSON, CSV) names each rwlock's algorithm and rule; lockswap report --map proposes rwlock rules that work" {
  local j="$BATS_TEST_TMPDIR/p.json" c="$BATS_TEST_TMPDIR/p.csv"
  run env LD_PRELOAD="$LIB" LOCKSWAP_PROFILE=1 LOCKSWAP_PROFILE_TOP=0 LOCKSWAP_PROFILE_OUT="$j" LOCKSWAP_ALGO_MAP='rw_make_hot=mcs-rw,mx_make=mcs,*=pf-t' "$RW" functions
  assert_success
  [ "$(grep -o '"algorithm":"mcs-rw","rule":"rw_make_hot=mcs-rw"' "$j" | wc -l)" -eq 2 ]
  [ "$(grep -o '"algorithm":"pf-t","rule":"\*=pf-t"' "$j" | wc -l)" -eq 3 ]
  run "$B/lockswap-report" "$j" --top 0
  assert_output --partial "algorithm per rwlock (rules; no rule: pf-t)"
  assert_output --partial "init, mcs-rw by rule rw_make_hot=mcs-rw"
  run env LD_PRELOAD="$LIB" LOCKSWAP_PROFILE=1 LOCKSWAP_PROFILE_OUT="$c" LOCKSWAP_ALGO_MAP='rw_make_hot=mcs-rw' "$RW" functions
  [ "$(grep -c '^rwlock,.*,mcs-rw,"rw_make_hot=mcs-rw"$' "$c")" -eq 2 ]
  [ "$(grep -c '^rwlock,.*,pthread,"(default)"$' "$c")" -eq 3 ]
  # from a profile of `timeouts` (every rwlock contended, whatever the timing)
  run env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=pthread LOCKSWAP_RWALGO=central LOCKSWAP_PROFILE=1 LOCKSWAP_PROFILE_TOP=0 LOCKSWAP_PROFILE_OUT="$j" "$RW" timeouts
  assert_success
  run "$B/lockswap-report" "$j" --map --rwalgo mcs-rw
  assert_success
  assert_line "# and 5 contended rwlocks of 5, by wait time"
  assert_line "LOCKSWAP_ALGO_MAP='rw_make_hot=mcs-rw,rw_make_cold=mcs-rw,*=central,*=pthread'" ||
    assert_line "LOCKSWAP_ALGO_MAP='rw_make_cold=mcs-rw,rw_make_hot=mcs-rw,*=central,*=pthread'"
  local line
  line=$(tail -1 <<<"$output")
  run env LD_PRELOAD="$LIB" LOCKSWAP_VERBOSE=1 "${line//\'/}" "$RW" functions
  assert_success
  assert_line "lockswap: map: rule 'rw_make_hot=mcs-rw': 2 rwlocks -> mcs-rw"
  assert_line "lockswap: map: rule 'rw_make_cold=mcs-rw': 3 rwlocks -> mcs-rw"
  # without --rwalgo: chosen from the counts (one read per write: pf-t)
  run "$B/lockswap-report" "$j" --map
  assert_line --regexp "^# rwlock #[0-9]+: .*: rw_make_(hot|cold)=pf-t$"
}
