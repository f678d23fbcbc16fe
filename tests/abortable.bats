#!/usr/bin/env bats
# The abortable queue locks (issue 4): clh-try, mcs-try (Scott & Scherer,
# PPoPP'01), clh-nb, mcs-nb (Scott, TR 773), cal, cal-fp (Marathe, Moir &
# Shavit, IPDPS'06). tests/stress.bats already runs every lock through the
# generic validator; this file adds what is specific to timeouts in queue
# locks, where their famous races are:
#   - tiny patience (1-2 us), so that nearly every attempt times out and
#     the timeout paths run all the time, many seeds, more threads than the
#     2 cores, the -inject build (random delays and yields between the steps
#     of every acquire, timeout and release path), every waiting policy;
#     the harness checks mutual exclusion (occupant word and a racy
#     counter), completion (a lost lock token is a deadlock: killed by
#     `timeout`), ETIMEDOUT never early, and no queue node left in use after
#     destroy();
#   - an AddressSanitizer build of the harness over these locks
#     (build/asan/abortable/stress, rules in
#     mk/abortable.mk). Queue nodes are type-stable, so ASan cannot see them
#     by itself: the abortable locks poison a node while it is free
#     (locks/abortable/abortable.h). It CAN report an access to a node after the
#     protocol freed it and before it was handed out again (a premature
#     free or a use after free), and heap/stack errors of the harness. It
#     CANNOT see a stale access made after the node was reused, nor races;
#   - the non-blocking property (tests/unit/abortable_nbtimeout.c): timed
#     attempts on a lock whose holder never releases return ETIMEDOUT while
#     a neighbour in the queue is stopped in a signal handler (kept stopped
#     until every attempt has returned; a generous watchdog turns a wait for
#     the neighbour into a failure, nothing else is timed);
#   - the POSIX mapping through the shim: native timedlock (no fallback),
#     ETIMEDOUT, the node statistics at exit.
# Seeds and iterations are sized by what a run checks (issue 35, item 3):
# the races are in the timeout paths, which 1-2 us patience takes on nearly
# every attempt, so more seeds where the -inject build shuffles them (park:
# 4), one where a run repeats another's path (ASan's park, the plain build);
# where the path is wait.c's, the same for every one of these locks (none
# reads the policy: helpers.bash own_wait_pick), two of them: the -inject
# yield run, the non-blocking property under spin and yield. Each
# validator command runs every lock and seed in one process (validate.bash).
load helpers
load validate
: "${AB_TIMEOUT:=60}"
S=$UNIT/stress
ABORTABLE="clh-try mcs-try clh-nb mcs-nb cal cal-fp"
NONBLOCKING="clh-nb mcs-nb cal cal-fp"

# ab_stress "ALGOS" "SEEDS" CMD ARGS... : CMD -a ALGO -s SEED ARGS for each,
# every algorithm and seed in one process (validate.bash: each run a child
# of its own, AB_TIMEOUT seconds each); fails naming every algorithm/seed
# that failed, with its FAIL lines.
ab_stress() {
  STRESS_TIMEOUT=$AB_TIMEOUT validate_lists "$@"
}

@test "abortable locks: registered, FIFO where the papers say so, with native timeout" {
  run "$LOCKSWAP" --names --cap timeout
  [ "$status" -eq 0 ]
  local a
  for a in $ABORTABLE; do
    [[ $'\n'"$output"$'\n' == *$'\n'"$a"$'\n'* ]] || { echo "missing: $a"; return 1; }
  done
  run "$LOCKSWAP" --names --cap fifo
  for a in clh-try mcs-try clh-nb mcs-nb; do
    [[ $'\n'"$output"$'\n' == *$'\n'"$a"$'\n'* ]] || { echo "not fifo: $a"; return 1; }
  done
  # the composite lock lets backed-off threads race: not FIFO
  [[ $'\n'"$output"$'\n' != *$'\n'"cal"$'\n'* ]]
  run "$LOCKSWAP" --names --cap qnode
  for a in clh-try mcs-try clh-nb mcs-nb; do
    [[ $'\n'"$output"$'\n' == *$'\n'"$a"$'\n'* ]] || { echo "not qnode: $a"; return 1; }
  done
}

@test "abortable locks: pthread_mutex_timedlock uses the native timeout (no fallback line), nodes reported at exit" {
  local a
  for a in $ABORTABLE; do
    run timeout 30 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=$a LOCKSWAP_VERBOSE=1 /bin/true
    [ "$status" -eq 0 ] || { echo "$a: $output"; return 1; }
    [[ "$output" == *"algorithm=$a "* ]] || { echo "$a: $output"; return 1; }
    [[ "$output" != *"timedlock by fallback"* ]] || { echo "$a: $output"; return 1; }
    [[ "$output" == *"lockswap: nodes in_use="*"max_in_use="* ]] || { echo "$a: $output"; return 1; }
  done
}

@test "LOCKSWAP_CAL_NODES: 1..16 accepted, 0 and 17 rejected in one line" {
  run timeout 30 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=cal LOCKSWAP_CAL_NODES=16 LOCKSWAP_VERBOSE=1 /bin/true
  [ "$status" -eq 0 ]
  [[ "$output" == *"LOCKSWAP_CAL_NODES=16"* ]]
  local v
  for v in 0 17 four; do
    run timeout 30 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=cal-fp LOCKSWAP_CAL_NODES=$v /bin/true
    [ "$status" -eq 2 ] || { echo "value $v: status $status: $output"; return 1; }
    [ "${#lines[@]}" -eq 1 ]
    [[ "$output" == "lockswap: LOCKSWAP_CAL_NODES"* ]]
  done
}

# --- tiny patience, many seeds, more threads than cores ------------------------

@test "abortable, -inject, park, 5 threads, mix with 1 us patience, 4 seeds" {
  ab_stress "$ABORTABLE" "21 22 23 24" "$S-inject" -w park -t 5 -n 600 -l 2 -m mix -p 1000
}

# (a yield is wait.c's step for these locks, one path for all six, none of
# whose own code reads the policy (helpers.bash own_wait_pick): the first
# and the last, two seeds; park and spin run every one)
@test "abortable, -inject, yield, 5 threads, timedlock only with 2 us patience, 2 seeds, two of the locks (wait.c's yield)" {
  # shellcheck disable=SC2086
  ab_stress "$(own_wait_pick $ABORTABLE)" "31 32" "$S-inject" -w yield -t 5 -n 150 -m timed -p 2000
}

@test "abortable, -inject, spin, 3 threads, mix with 2 us patience, 2 seeds" {
  ab_stress "$ABORTABLE" "41 42" "$S-inject" -w spin -t 3 -n 300 -l 2 -m mix -p 2000
}

@test "abortable, park with no spinning or yielding (every wait sleeps), 5 threads, timed 20 us, mix" {
  LOCKSWAP_YIELD=0 ab_stress "$ABORTABLE" "51" "$S-inject" -w park -S 0 -t 5 -n 100 -m timed -p 20000
  LOCKSWAP_YIELD=0 ab_stress "$ABORTABLE" "52" "$S-inject" -w park -S 0 -t 5 -n 400 -l 2 -m mix -p 2000
}

# 8 x 300 critical sections over 3 locks, most attempts timing out: every
# hand-over and timeout path many times over (the races are the -inject
# runs' to find)
@test "abortable, plain build, park, 8 threads on 2 cores, 3 locks, mix with 5 us patience" {
  ab_stress "$ABORTABLE" "61" "$S" -w park -t 8 -n 300 -l 3 -m mix -p 5000
}

@test "cal and cal-fp: the last thread finishes alone (an aborted node at the tail naming a released one)" {
  # Fig. 2 retries the same node: a lone thread whose node is released but
  # not the tail waited for ever. 2 threads, 1 lock, mix: one finishes first.
  ab_stress "cal cal-fp" "1 2 3 4" "$S" -w park -t 2 -n 500 -l 1 -m mix
  ab_stress "cal cal-fp" "5 6" "$S-inject" -w yield -t 2 -n 500 -l 1 -m mix
}

@test "cal and cal-fp with 1, 2 and 16 nodes per lock (LOCKSWAP_CAL_NODES)" {
  local n
  for n in 1 2 16; do
    LOCKSWAP_CAL_NODES=$n ab_stress "cal cal-fp" "7$n" "$S-inject" -w park -t 5 -n 600 -l 2 -m mix -p 1000 ||
      { echo "nodes=$n"; return 1; }
  done
}

# --- AddressSanitizer -----------------------------------------------------------

@test "ASan (nodes poisoned while free): every abortable lock, -inject, park and spin, mix, 1 us patience" {
  ab_stress "$ABORTABLE" "81" "$B/asan/abortable/stress" -w park -t 5 -n 300 -l 2 -m mix -p 1000
  ab_stress "$ABORTABLE" "83" "$B/asan/abortable/stress" -w spin -t 3 -n 200 -l 2 -m mix -p 2000
}

# --- the non-blocking property -------------------------------------------------

nbtest() { # ALGO WAIT ARGS...
  local a=$1 w=$2 out="$BATS_TEST_TMPDIR/nb" rc=0
  shift 2
  timeout -k 2 120 "$@" -a "$a" -w "$w" -W 60 >"$out" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || { echo "$a wait=$w: exit $rc: $(cat "$out")"; return 1; }
  [[ "$(<"$out")" == "abortable_nbtimeout: OK algo=$a "* ]] || { echo "$a: $(cat "$out")"; return 1; }
}

# Under spin and yield, where these locks wait through wait.c alone (none
# reads the policy), the first and the last of them (own_wait_pick); park
# runs every one.
@test "non-blocking timeout: behind a stopped waiter and a neighbour stopped mid-attempt, every lock under park, two (wait.c's spin and yield) under spin and yield" {
  local a w two
  # shellcheck disable=SC2086
  two=" $(own_wait_pick $NONBLOCKING | tr '\n' ' ') "
  for a in $NONBLOCKING; do
    for w in spin yield park; do
      [ "$w" = park ] || [[ "$two" == *" $a "* ]] || continue
      nbtest "$a" "$w" "$UNIT/abortable_nbtimeout" -p 200000 -t 3 -r 60 -s 1 || return 1
    done
  done
}

@test "non-blocking timeout, -inject build and ASan build" {
  local a
  for a in $NONBLOCKING; do
    nbtest "$a" park "$UNIT/abortable_nbtimeout-inject" -p 200000 -t 3 -r 40 -s 2 || return 1
    nbtest "$a" yield "$B/asan/abortable/abortable_nbtimeout" -p 200000 -t 3 -r 20 -s 3 || return 1
  done
}

@test "abortable_nbtimeout: bad usage is one line and exit 2" {
  run "$UNIT/abortable_nbtimeout" -a mcs
  [ "$status" -eq 2 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"mcs has no native timeout"* ]]
  run "$UNIT/abortable_nbtimeout" -a clh-nb -w nap
  [ "$status" -eq 2 ]
  [[ "$output" == *"(valid: spin, yield, park)"* ]]
}
