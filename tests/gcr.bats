#!/usr/bin/env bats
# Generic concurrency restriction, LOCKSWAP_ALGO=NAME+gcr (issue 20): the
# wrapper's own behaviours with tests/unit/gcr.c around every algorithm (see
# its header: driven step by step, nothing depends on speed), the
# configuration and the command, the generic validator, and the end-to-end
# programs under NAME+gcr: the base's hand-overs for every algorithm, every
# program for representative bases (gcr_e2e, below), several programs'
# cases per process and several processes at once, to stay within the time
# the suite allows. Yield runs are sized by iters_for (helpers.bash).
load helpers
load validate
G="$UNIT/gcr"

gcr_names() { "$LOCKSWAP" --names --wrap gcr; }

@test "the active set is bounded: at most LOCKSWAP_GCR_ACTIVE threads inside the underlying lock, every algorithm; without the wrapper 6 are" {
  run timeout -k 2 "$(hang_timeout)" "$G" -a all bound
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  run timeout -k 2 60 "$G" -a mcs -x bound
  [ "$status" -eq 1 ] && [[ "$output" == *"6 threads inside the underlying lock"* ]] || { echo "$output"; return 1; }
}

@test "passive threads are re-admitted in FIFO order, the k-th after exactly k x PERIOD releases of a lock whose active set never drains; with approvals off (PERIOD=0) the first starves" {
  run timeout -k 2 "$(hang_timeout)" "$G" -a all readmit
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  run timeout -k 2 120 "$G" -a ticket -p 7 readmit
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  run timeout -k 2 30 env LOCKSWAP_GCR_PERIOD=0 "$G" -a mcs -T 3 readmit
  [ "$status" -eq 1 ] && [[ "$output" == *"waiting for the approved passive head"* ]] || { echo "$output"; return 1; }
}

@test "timed waiters in the passive queue (the head or behind it) and inside the underlying lock time out on time with the lock held throughout; trylock never waits passive" {
  run timeout -k 2 "$(hang_timeout)" "$G" -a all timeout
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  run timeout -k 2 "$(hang_timeout)" "$G" -a all trylock
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}

@test "an unlock of an unlocked mutex leaves the wrapper's word idle (issue 25)" {
  run timeout -k 2 30 "$G" -a tas misuse
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  run timeout -k 2 30 "$G" -a ttas misuse
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}

@test "a lock while an unlock of the unlocked mutex is preempted inside its borrow queues passive and is woken when the holder releases (the borrowed sign bit is not PASSIVE)" {
  local a
  for a in tas ttas; do
    run timeout -k 2 30 "$G-inject" -a "$a" -T 20 misuse-window
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  done
}

@test "LOCKSWAP_ALGO=NAME+gcr and lockswap -a NAME+gcr run the program; a bad base or wrapper, pthread+gcr or a bad tunable: one line naming the valid choices, exit 2 before main" {
  run timeout 10 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=mcs+gcr "$PROGS/hello"
  [ "$status" -eq 0 ] && [ "$output" = "main ran" ]
  run timeout 10 "$LOCKSWAP" -a clh+gcr -- "$PROGS/hello"
  [ "$status" -eq 0 ] && [ "$output" = "main ran" ]
  local bad v
  for bad in mcs+foo foo+gcr mcs+ +gcr pthread+gcr mcs+gcr+gcr; do
    run timeout 10 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO="$bad" "$PROGS/hello"
    [ "$status" -eq 2 ] && [ "${#lines[@]}" -eq 1 ] && [[ "$output" == "lockswap: LOCKSWAP_ALGO: "*"valid: "* ]] ||
      { echo "$bad: $status $output"; return 1; }
    run timeout 10 "$LOCKSWAP" -a "$bad" -- "$PROGS/hello"
    [ "$status" -eq 2 ] && [[ "$output" == *"valid: "* && "$output" != *"main ran"* ]] || { echo "-a $bad: $status $output"; return 1; }
  done
  run timeout 10 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=mcs+foo "$PROGS/hello"
  [[ "$output" == *"unknown wrapper 'foo'"*"(valid: gcr)"* ]]
  run timeout 10 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=foo+gcr "$PROGS/hello"
  [[ "$output" == *"unknown algorithm 'foo'"*"mcs"*"NAME+WRAPPER"* ]]
  for v in LOCKSWAP_GCR_ACTIVE=0 LOCKSWAP_GCR_ACTIVE=4097 LOCKSWAP_GCR_ACTIVE=x LOCKSWAP_GCR_PERIOD=8192 LOCKSWAP_GCR_PERIOD=-1; do
    run timeout 10 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=mcs+gcr "$v" "$PROGS/hello"
    [ "$status" -eq 2 ] && [ "${#lines[@]}" -eq 1 ] && [[ "$output" == "lockswap: ${v%%=*}: "* ]] || { echo "$v: $status $output"; return 1; }
  done
}

@test "the tunables: defaults (half the CPUs of the affinity mask, at least 1; period 4096) and overrides, in LOCKSWAP_VERBOSE's report" {
  local half
  half=$(( $(nproc) / 2 )); [ "$half" -ge 1 ] || half=1
  run timeout 10 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=ticket+gcr LOCKSWAP_VERBOSE=1 "$PROGS/hello"
  [ "$status" -eq 0 ]
  [[ "$output" == *"algorithm=ticket+gcr"* && "$output" == *"LOCKSWAP_GCR_ACTIVE=$half "* && "$output" == *"LOCKSWAP_GCR_PERIOD=4096 "* ]] || { echo "$output"; return 1; }
  run timeout 10 taskset -c 0 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=ticket+gcr LOCKSWAP_VERBOSE=1 "$PROGS/hello"
  [[ "$output" == *"LOCKSWAP_GCR_ACTIVE=1 "* ]] || { echo "$output"; return 1; }
  run timeout 10 env LD_PRELOAD="$LIB" LOCKSWAP_ALGO=ticket+gcr LOCKSWAP_VERBOSE=1 LOCKSWAP_GCR_ACTIVE=3 LOCKSWAP_GCR_PERIOD=0 "$PROGS/hello"
  [[ "$output" == *"LOCKSWAP_GCR_ACTIVE=3 "* && "$output" == *"LOCKSWAP_GCR_PERIOD=0 "* ]] || { echo "$output"; return 1; }
}

@test "lockswap --list documents the wrapper and its tunables; --names --wrap gcr names every lock's composition, --cap filters them (no fifo)" {
  run "$LOCKSWAP" --list
  [[ "$output" == *"+gcr "*"concurrency restriction"* && "$output" == *"LOCKSWAP_GCR_ACTIVE="* && "$output" == *"LOCKSWAP_GCR_PERIOD="* ]] || { echo "$output"; return 1; }
  run "$LOCKSWAP" --names --wrap gcr
  [ "$output" = "$("$LOCKSWAP" --names --cap lock | sed 's/$/+gcr/')" ] || { echo "$output"; return 1; }
  run "$LOCKSWAP" --names --wrap gcr --cap timeout
  [ "$output" = "$("$LOCKSWAP" --names --cap timeout | sed 's/$/+gcr/')" ] || { echo "$output"; return 1; }
  run "$LOCKSWAP" --names --wrap gcr --cap fifo
  [ -z "$output" ]
  run "$LOCKSWAP" --names --wrap bogus
  [ "$status" -eq 2 ] && [[ "$output" == *"valid: gcr"* ]]
}

# Under yield and spin what changes is how the wrapper's passive queue
# waits, the same code whatever the base: those run for the bases whose own
# code reads the policy and two that wait through wait.c (helpers.bash
# own_wait_pick); park runs every composition.
@test "the generic validator under NAME+gcr, every algorithm under park, the bases with a waiting path of their own and two of wait.c's under yield and spin (6 threads, mix of lock, trylock, timedlock, two locks, cross unlocks; 3 threads under spin)" {
  local reps rc=0
  # shellcheck disable=SC2046
  reps=$(own_wait_pick $(gcr_names))
  STRESS_TIMEOUT=60 validate_lists "$(gcr_names)" 7 "$UNIT/stress" -w park -t 6 -n 300 -m mix -l 2 -p 5000 || rc=1
  STRESS_TIMEOUT=60 validate_lists "$reps" 7 "$UNIT/stress" -w yield -t 6 -n @300@ -m mix -l 2 -p 5000 || rc=1
  STRESS_TIMEOUT=60 validate_lists "$reps" 7 "$UNIT/stress" -w spin -t 3 -n 300 -m mix -l 2 -p 5000 || rc=1
  return "$rc"
}

# What a base changes under the wrapper is how its lock, trylock, timedlock
# and unlock hand the lock over: the exclusion programs and the cross-thread
# unlocks' hand-overs, which run for every composition. The shim's semantics around it
# (types, errors, condvars, cancellation, static initialisers, fork, memory)
# pass through the wrapper's one path whatever the base: they run for the
# bases with a waiting path of their own (helpers.bash: own_policy_algos) and
# one base of each other family of lock (REP below), not for all 27.
GCR_REP_BASES="tas ticket mcs clh-try cal hmcs hemlock"
gcr_rep_names() {
  local own a
  own=" $(own_policy_algos | tr '\n' ' ') $GCR_REP_BASES "
  for a in $(gcr_names); do
    [[ "$own" == *" ${a%+gcr} "* ]] && echo "$a"
  done
  return 0
}

# gcr_e2e WAIT: the end-to-end programs under NAME+gcr, under WAIT. Under
# park, for every composition the hand-over programs whose every case is a
# base's hand-over: the cross-thread unlocks' hand-overs (cross_unlock's
# semaphore and chain: every unlock by a thread that did not lock) and
# exclusion's mixed case (lock, trylock, timedlock, short deadlines, a
# holder preempted inside: exclusion's normal, timedlock-short and
# preempted cases in turn); for the representative ones every other
# program (the shim's semantics around the wrapper: cross_unlock's simple
# case, the mutex types and a locker that has exited, 1,200 thread starts,
# among them) and exclusion's recursive case; the programs that churn
# threads, forks and memory (mutex_memory's every case: copies, reuse
# without destroy, 100,000 mutexes, many held, threads; fork's held, owner
# and busy: thousands of thread and process starts) for the three places a
# composition keeps a lock's data (GCR_DATA_BASES: the wrapper's word
# before an inline state, tas; before an out-of-line block behind its
# header line, cal; an inline state with per-cluster blocks attached under
# contention, hmcs), since what they check is that data's life, not a
# wait. What else a base keeps (the pool's queue nodes, per-thread
# published nodes) is per thread and the base's own, the same with the
# wrapper as without: fork.bats and mutex-memory.bats run every base. Under yield and spin, where a
# yield or a spin step is the policy's shared code and the wrapper's
# passive queue the same whatever the base, exclusion's mixed case for the
# bases whose own code reads the policy and two that wait through wait.c
# (helpers.bash own_wait_pick). The cases of a program run in one process
# (two for fork's and mutex_memory's, whose cases share process state), 4
# processes at a time (under spin as many as there are CPUs: a spinner
# beside another process's descheduled holder only burns its slice).
GCR_DATA_BASES="tas cal hmcs"
gcr_e2e() {
  untraced gcr_e2e_untraced "$@"
}
gcr_e2e_untraced() {
  local wait=$1 a p dir="$BATS_TEST_TMPDIR/e2e-$1" t=4 par=4
  mkdir -p "$dir"
  [ "$wait" = spin ] && t=3 && par=$(nproc)
  cases() { "$PROGS/$1" 2>&1 | sed -n 's/^cases://p'; }
  local every=() rep=() data=() names
  if [ "$wait" = park ]; then
    names=$(gcr_names)
    every+=("cross_unlock semaphore chain" "exclusion mixed $t 200")
    # a representative base's cross_unlock and exclusion cases in one
    # process each (exclusion's list form sizes each run as the tests do,
    # check.h sized(): 2000 at TEST_ITERS_PERCENT=10 is the 200 above)
    rep+=("cross_unlock simple semaphore chain" "exclusion mixed:$t:2000 recursive:$t:2000")
    for p in mutex_types condvar static_init cancel async_cancel mutex_errors cond_users cxx_sync; do
      rep+=("$p $(cases "$p")")
    done
    rep+=("fork atfork")
    data+=("fork held owner busy" "mutex_memory reuse threads" "mutex_memory many-held" "mutex_memory copy many nested")
  else
    # shellcheck disable=SC2046
    names=$(own_wait_pick $(gcr_names))
    every+=("exclusion mixed $t 200")
  fi
  local n=0 j reps datas=" " running=0 failed=0 pid rc limit=$((TEST_TIMEOUT * ${LOCKSWAP_TEST_TIMEOUT_SCALE:-5}))
  local -A what=()
  reps=" $(gcr_rep_names | tr '\n' ' ') "
  for a in $GCR_DATA_BASES; do datas+="$a+gcr "; done
  # reap: wait for one job; a failure is kept with the end of its output.
  # Each job is one fork of this shell (run-limit, then the program: a
  # process start costs ~10 ms of CPU here, so no subshell is added).
  reap() {
    rc=0
    wait -n -p pid || rc=$?
    running=$((running - 1))
    if [ "$rc" -ne 0 ]; then
      failed=1
      printf '=== %s: exit %d\n' "${what[$pid]% *}" "$rc"
      tail -n 5 "$dir/out.${what[$pid]##* }"
    fi
  }
  for a in $names; do
    local jobs=("${every[@]}")
    [ ${#rep[@]} -eq 0 ] || [[ "$reps" != *" $a "* ]] || jobs=("${rep[@]}")
    [[ "$datas" == *" $a "* ]] && jobs+=("${data[@]}")
    for j in "${jobs[@]}"; do
      n=$((n + 1))
      # shellcheck disable=SC2086
      "$RUN_LIMIT" -k 5 "$limit" LD_PRELOAD="$LIB" LOCKSWAP_ALGO="$a" LOCKSWAP_WAIT="$wait" \
        TEST_ITERS_PERCENT="$TEST_ITERS_PERCENT" "$PROGS"/$j >"$dir/out.$n" 2>&1 &
      what[$!]="$a ($wait) $j $n"
      running=$((running + 1))
      [ "$running" -lt "$par" ] || reap
    done
  done
  while [ "$running" -gt 0 ]; do reap; done
  [ "$failed" -eq 0 ]
}

@test "gcr_rep_names: every base with its own waiting path and one of each family, all composed with +gcr; GCR_DATA_BASES among them" {
  local reps
  reps=" $(gcr_rep_names | tr '\n' ' ') "
  for a in $(own_policy_algos) $GCR_REP_BASES $GCR_DATA_BASES; do
    [[ "$reps" == *" $a+gcr "* ]] || { echo "missing $a+gcr in:$reps"; return 1; }
  done
}

# The wrapper's path is the same whatever the base: the programs' hand-over
# loops (check.h: sized()) make a tenth of their turns here, under every
# policy; each base runs them in full in its own suites.
@test "end-to-end programs under NAME+gcr, park (the default): the cross-thread unlocks' hand-overs and exclusion's mixed case for every algorithm, every program for GCR_REP_BASES and the bases with a waiting path of their own (thread, fork and memory churn for GCR_DATA_BASES, the three places a composition keeps a lock's data)" {
  TEST_ITERS_PERCENT=10 TEST_TIMEOUT=60 gcr_e2e park
}

@test "end-to-end programs under NAME+gcr, yield and spin: exclusion's mixed case for the bases with a waiting path of their own and two of wait.c's" {
  TEST_ITERS_PERCENT=10 TEST_TIMEOUT=60 gcr_e2e yield
  TEST_ITERS_PERCENT=10 TEST_TIMEOUT=60 gcr_e2e spin
}
