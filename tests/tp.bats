#!/usr/bin/env bats
# The time-published locks mcs-tp and clh-tp (issue 5; He, Scherer, Scott,
# TR 867, ../shared/papers/000_9c294dcad948dd76.txt):
#   - their time source (tests/unit/tp_clock.c);
#   - the generic validator (tests/unit/stress.c, the same harness as
#     tests/stress.bats) with tiny patience, fault injection and thresholds
#     small enough that waiters are passed over and removed all the time;
#   - preemption (tests/unit/tp_preempt.c): a stopped waiter is removed and
#     the lock keeps moving, a stopped holder makes waiters yield, timeouts
#     hold; and the same tests fail for plain MCS and CLH;
#   - space (tests/unit/tp_space.c): nodes in use stay within the appendix-A
#     bound and every node comes back;
#   - their tunables through the shim.
# Every command runs under `timeout`; nothing depends on the machine's speed
# (see the headers of the unit programs). Seeds and iterations are sized by
# what a run checks (issue 35, item 3): every policy and build runs for both
# locks (their own code reads the policy), with a second seed where the
# -inject build's tiny patience or removals make the interleavings rare
# (spin, park), one where the run repeats another's path.
load helpers
load validate
: "${STRESS_TIMEOUT:=60}"
S="$UNIT/stress"
P="$UNIT/tp_preempt"
TP="mcs-tp clh-tp"

# run_all "SEEDS" ARGS... : the stress harness for both locks and each seed,
# one process (validate.bash: each run in a child of its own).
run_all() {
  local seeds=$1
  shift
  validate_lists "$TP" "$seeds" "$@"
}

# --- time source -------------------------------------------------------------

@test "tp clock: TSC used only when invariant, monotonic, same epoch and rate as CLOCK_MONOTONIC, cross-core" {
  run timeout 60 "$UNIT/tp_clock"
  echo "$output"
  [ "$status" -eq 0 ]
  if grep -qw constant_tsc /proc/cpuinfo && grep -qw nonstop_tsc /proc/cpuinfo; then
    [[ "$output" == *"TSC invariant yes"* ]]
    [[ "$output" == *"clock source tsc,"* ]]
  fi
}

@test "tp clock: LOCKSWAP_TP_CLOCK=1 semantics: clock_gettime, same checks" {
  run timeout 60 "$UNIT/tp_clock" --tsc-off
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"clock source clock_gettime"* ]]
}

# --- the validator -----------------------------------------------------------

@test "tp locks, every policy, lock() and mix, default thresholds" {
  run_all "1" "$S" -w spin -t 2 -n 3000 -m lock
  run_all "1" "$S" -w yield -t 6 -n 1000 -m mix -l 3
  run_all "1" "$S" -w park -t 6 -n 1000 -m mix -l 3
  LOCKSWAP_YIELD=0 run_all "1" "$S" -w park -S 0 -t 6 -n 600 -m mix -l 3
}

@test "tp locks, timedlock only, 1 us and 2 us patience (nearly every call times out), every policy" {
  run_all "1" "$S" -w spin -t 2 -n 3000 -m timed -p 1000
  run_all "1" "$S" -w yield -t 6 -n 1500 -m timed -p 2000
  run_all "1" "$S" -w park -t 6 -n 1500 -m timed -p 1000
}

@test "tp locks, -inject, tiny patience, every policy" {
  run_all "1 2" "$S-inject" -w spin -t 2 -n 1000 -m timed -p 1000
  run_all "1" "$S-inject" -w yield -t 6 -n 500 -m mix -l 3 -p 2000
  run_all "1 2" "$S-inject" -w park -t 6 -n 500 -m mix -l 3 -p 1000
  LOCKSWAP_YIELD=0 run_all "1" "$S-inject" -w park -S 0 -t 6 -n 500 -m timed -p 2000
}

@test "tp locks, -inject, 1 us UPDATE_DELAY and 3 us patience: waiters are passed over and removed constantly" {
  export LOCKSWAP_TP_UPDATE_DELAY_NS=1000 LOCKSWAP_TP_PATIENCE_NS=3000 LOCKSWAP_TP_MAX_CS_NS=1000
  run_all "1 2" "$S-inject" -w spin -t 4 -n 1000 -m lock
  run_all "1" "$S-inject" -w yield -t 6 -n 600 -m mix -l 2 -p 2000
  run_all "1" "$S-inject" -w park -t 6 -n 600 -m mix -l 2 -p 5000
}

@test "mcs-tp, -inject, treadmill bound 2 (the holder switches to scanning after 2 removals)" {
  run timeout 60 env LOCKSWAP_TP_TREADMILL=2 LOCKSWAP_TP_UPDATE_DELAY_NS=1000 LOCKSWAP_TP_PATIENCE_NS=2000 \
    "$S-inject" -a mcs-tp -w yield -t 8 -n 800 -m mix -l 2 -p 1000
  echo "$output"
  [ "$status" -eq 0 ]
}

# --- preemption ----------------------------------------------------------------

# preempt TEST WAIT... : tp_preempt for both locks (plain and -inject builds,
# or only the builds in $BUILDS)
preempt() {
  local t=$1 a w b out rc failed=()
  shift
  for a in $TP; do
    for w in "$@"; do
      for b in ${BUILDS:-"$P" "$P-inject"}; do
        rc=0
        out=$(timeout -k 2 90 "$b" -a "$a" -w "$w" "$t" 2>&1) || rc=$?
        [ "$rc" -eq 0 ] || { failed+=("$a/$w/${b##*/}"); echo "$out"; }
      done
    done
  done
  [ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}"; return 1; }
}

@test "preemption: a stopped waiter is removed from the queue and the lock keeps moving (spin, yield)" {
  preempt stopped-waiter spin yield
}

@test "park: a parked waiter publishes no time, so it is passed over like a preempted one, and later acquires" {
  # tp_preempt waits until the waiter sleeps in futex(2), then stops it: the
  # runners must get 1000 acquisitions past it (it was removed, not granted),
  # and once resumed it re-queues and gets the lock. Fails if a sleeper is
  # treated as live (it would be granted the lock while stopped).
  preempt stopped-waiter park
}

@test "yield, park: a waiter spins LOCKSWAP_TP_SPIN_FACTOR x LOCKSWAP_SPIN steps before it yields (a yielding waiter stops publishing)" {
  # Plain build only: the -inject build's random delays call sched_yield too.
  BUILDS="$P" preempt spin-factor yield park
}

@test "preemption: a stopped holder makes waiters yield (MAXIMUM_CS_TIME 100 us), and not below it" {
  # Plain build only: the -inject build's random delays call sched_yield too.
  BUILDS="$P" preempt holder-yields spin
  BUILDS="$P" preempt holder-no-yield spin
}

@test "preemption: a lock handed to a stopped waiter makes the waiters behind it yield (the hand-over looks like a stalled holder)" {
  # Plain build only: the -inject build's random delays call sched_yield too.
  BUILDS="$P" preempt grantee-yields spin
}

@test "preemption: timedlock times out (never early) past a stopped holder and a stopped waiter; then the lock works" {
  preempt timeouts spin yield park
}

# The watchdog is what fails them: 1 s for each phase (-T) is enough, every
# phase before the one checked waits for an event milliseconds away, and
# the one checked never ends for these locks. Its waiters spin throughout
# (under park too: tp_preempt gives them an endless spin budget), both CPUs
# for the whole wait: 3 s a run was 13 s of CPU for the four runs. A
# waiter's spin behind a stopped holder is wait.c's ls_wait_while_eq under
# spin for both plain locks, one path that never yields: MCS runs it;
# passing a stopped waiter is each queue's own, and both run it.
@test "preemption: the same tests fail for plain MCS and CLH (they cannot pass a stopped waiter; MCS, waiting as CLH does through wait.c, never yields)" {
  local a
  for a in mcs clh; do
    run timeout 30 "$P" -a "$a" -w spin -T 1 stopped-waiter
    [ "$status" -eq 1 ] || { echo "$a: $output"; return 1; }
    [[ "$output" == *"watchdog fired in phase: runners making 1000 acquisitions"* ]] || { echo "$a: $output"; return 1; }
  done
  run timeout 30 "$P" -a mcs -w spin -T 1 holder-yields
  [ "$status" -eq 1 ] || { echo "mcs: $output"; return 1; }
  [[ "$output" == *"watchdog fired in phase: each waiter yielding"* ]] || { echo "mcs: $output"; return 1; }
}

# --- space ----------------------------------------------------------------------

@test "space: nodes in use within the appendix-A bound (T^2 + 2T + 2), all given back; contend and held" {
  local a m t w
  for a in $TP; do
    for m in contend held; do
      for w in spin yield; do
        # a thread per core, and 8 per core (preempted waiters removed)
        for t in 2 16; do
          run timeout 60 "$UNIT/tp_space" -a "$a" -m "$m" -w "$w" -t "$t" -n 1000
          [ "$status" -eq 0 ] || { echo "$output"; return 1; }
        done
      done
    done
  done
}

# --- through the shim -------------------------------------------------------------

@test "shim: both listed with timeout,qnode; tunables shown with LOCKSWAP_VERBOSE=1" {
  run "$LOCKSWAP" --names --cap timeout
  [[ "$output" == *"mcs-tp"* ]]
  [[ "$output" == *"clh-tp"* ]]
  run timeout 30 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=clh-tp LOCKSWAP_VERBOSE=1 LOCKSWAP_TP_PATIENCE_NS=300000 true
  [ "$status" -eq 0 ]
  [[ "$output" == *"LOCKSWAP_TP_PATIENCE_NS=300000"* ]]
  [[ "$output" == *"LOCKSWAP_TP_UPDATE_DELAY_NS="* ]]
  run timeout 30 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=mcs-tp LOCKSWAP_VERBOSE=1 true
  [[ "$output" == *"LOCKSWAP_TP_TREADMILL="* ]]
}

@test "shim: a bad tunable is one line naming the variable and the range, exit 2" {
  local v
  for v in LOCKSWAP_TP_PATIENCE_NS=0 LOCKSWAP_TP_UPDATE_DELAY_NS=abc LOCKSWAP_TP_CLOCK=2 \
    LOCKSWAP_TP_TREADMILL=1 LOCKSWAP_TP_MAX_CS_NS=-5; do
    run timeout 30 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=mcs-tp "$v" true
    [ "$status" -eq 2 ] || { echo "$v: $status $output"; return 1; }
    [ "${#lines[@]}" -eq 1 ]
    [[ "$output" == "lockswap: ${v%%=*}: "* ]]
  done
}

@test "shim: mutual exclusion, timedlock and a preempted holder, both locks, every policy, clock_gettime too" {
  local a w
  for a in $TP; do
    for w in spin yield park; do
      run under "$a" "$w" -- "$PROGS/exclusion" mixed 6 400
      [ "$status" -eq 0 ] || { echo "$a $w: $output"; return 1; }
    done
    run under "$a" -- env LOCKSWAP_TP_CLOCK=1 "$PROGS/exclusion" timedlock-short 6 400
    [ "$status" -eq 0 ] || { echo "$a clock_gettime: $output"; return 1; }
  done
}
