#!/usr/bin/env bats
# Every lock through the generic validator, tests/unit/stress.c (issue 2,
# items 6-8 and 12: mutual exclusion under heavy contention with more threads
# than cores, every waiting policy, timeouts, nodes given back). Each case
# runs for EVERY algorithm of `lockswap --names --cap lock`, so a new lock is
# covered by adding its file. Plain build and the -inject build (random
# delays and yields between the steps of every acquire and release path).
# Each run is under `timeout`: a deadlock or a lost wake-up is a failure,
# and the harness then prints where every thread was.
#
# spin runs use 2 threads (pure spinning with more threads than the 2 cores
# crawls); yield and park use 6. mix mode uses 3 locks (two held at once now
# and then) and adds trylock, timedlock, self-checks on a held lock and
# unlock from another thread. Yield runs are sized by @N@ (helpers.bash,
# iters_for: a tenth for the algorithms whose yield path is wait.c's);
# spin and park runs keep every iteration, except where the path is shared
# (TEST_SHARED_PATH, helpers.bash): park with every waiter asleep at once
# (-S 0, LOCKSWAP_YIELD=0) differs from park only in wait.c's budget. The
# pool's per-thread caches serve only the algorithms that take queue nodes.
# Iterations are sized by what a run checks (issue 35, item 3): a park run
# needs critical sections enough that 6 threads on 2 cores overlap, every
# hand-over path taken many times over (600 lock() and 400 mix iterations
# a thread: 3,600 and 2,400 critical sections, with sleeps, wake-ups and
# timeouts in each), not 10^4; the -inject build's spin lock() runs keep
# 300 (the MCS race of helpers.bash was caught in 4 of 5 seeds at 300, 1 of
# 5 at 50), its mix runs 150 (a lock without exclusion fails 4 of 4 seeds
# at 150 as at 300), its park runs one mix seed besides lock().
#
#   STRESS_ALGOS="a b"   run only these algorithms (default: every lock)
#   STRESS_TIMEOUT=S     seconds allowed per run (default 120: a hang
#                        detector, not a speed check; a correct run of the
#                        slowest case, clh-try with 10 us patience under
#                        park, took 37-44 s with two busy loops on a machine
#                        already at load 15, results/glibc/)
#   STRESS=PATH          the harness to run (default build/unit/stress)
load helpers
load validate
: "${STRESS_TIMEOUT:=120}"
: "${STRESS:=$UNIT/stress}"
S=$STRESS

# stress_all "SEEDS" ARGS... : the harness over every lock and every seed,
# a process for every lock whose run is sized alike (validate.bash); fails
# naming each algorithm/seed that failed, with its FAIL lines.
stress_all() {
  local seeds=$1
  shift
  validate_lists "${STRESS_ALGOS:-$(algos lock)}" "$seeds" "$@"
}

# --- the validator catches what it claims to catch ---------------------------

@test "stress harness: a lock without mutual exclusion fails (occupant and counter checks); so do a leaked queue node and ETIMEDOUT before the deadline" {
  run timeout 30 "$S" -a selftest-nolock -t 4 -n 2000
  [ "$status" -eq 1 ]
  [[ "$output" == *"mutual exclusion"* ]]
  [[ "$output" == *"lost updates"* ]]
  run timeout 30 "$S" -a selftest-leak -t 2 -n 100
  [ "$status" -eq 1 ]
  [[ "$output" == *"200 queue node(s) still in use"* ]]
  run timeout 30 "$S" -a selftest-early -t 2 -n 100 -m timed -p 1000000000
  [ "$status" -eq 1 ]
  [[ "$output" == *"ETIMEDOUT"*"before its deadline"* ]]
}

# several algorithms and seeds in one process, each run a child of its own
# (validate.bash): each failed run is named, the others still run
@test "stress harness: -a and -s take lists, every run checked, a failed run named with its seed" {
  run timeout 60 "$S" -a selftest-nolock,mcs,selftest-leak -s 3,4 -t 2 -n 200 -q
  [ "$status" -eq 1 ]
  [[ "$output" == *"FAIL algo=selftest-nolock"*"seed=3"* && "$output" == *"FAIL algo=selftest-nolock"*"seed=4"* ]] || { echo "$output"; return 1; }
  [[ "$output" == *"FAIL algo=selftest-leak seed=4: 400 queue node(s) still in use"* ]] || { echo "$output"; return 1; }
  [[ "$output" != *"algo=mcs"* ]] || { echo "$output"; return 1; }
  run timeout 60 "$S" -a ticket16,mcs -s 3,4 -t 2 -n 200
  [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 4 ] || { echo "$output"; return 1; }
  [[ "${lines[3]}" == "stress: OK algo=mcs "*" seed=4 "* ]] || { echo "$output"; return 1; }
}

@test "stress harness: stopped by timeout, it says where each thread is and fails" {
  run timeout -s TERM 1 "$S" -a ttas -t 2 -n 100000000
  [ "$status" -eq 124 ]
  [[ "$output" == *"stopped by a timeout"* ]]
  [[ "$output" == *"thread 0: iteration"* ]]
  [[ "$output" == *"thread 1: iteration"* ]]
}

@test "stress harness: bad usage is one line and exit 2" {
  run "$S" -a nosuchlock
  [ "$status" -eq 2 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == *"unknown algorithm 'nosuchlock' (valid: "*"mcs"* ]]
  run "$S" -a pthread
  [ "$status" -eq 2 ]
  [[ "$output" == *"not a lock"* ]]
  run "$S" -a mcs -t 0
  [ "$status" -eq 2 ]
  [[ "$output" == *"-t: invalid value '0'"* ]]
  run "$S" -a mcs -m sometimes
  [ "$status" -eq 2 ]
  [[ "$output" == *"(valid: lock, try, timed, mix)"* ]]
  run "$S" -a mcs -w nap
  [ "$status" -eq 2 ]
  [[ "$output" == *"(valid: spin, yield, park)"* ]]
  run env LOCKSWAP_ALOCK_SLOTS=0 "$S" -a alock
  [ "$status" -eq 2 ]
  [[ "$output" == *"LOCKSWAP_ALOCK_SLOTS"*"out of range"* ]]
}

@test "stress harness: a correct run prints one OK line with the figures" {
  run timeout 30 "$S" -a mcs -t 3 -n 500 -m mix -l 2
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ "$output" == "stress: OK algo=mcs wait=park "*"threads=3 locks=2 mode=mix"*"acquisitions="*"timeouts="*"nodes_max_in_use="* ]]
}

# --- every lock, every policy ------------------------------------------------
# One seed per case, a different one in each (a failing seed is printed and
# can be replayed: stress -a ALGO ... -s SEED).

@test "every lock, spin, 2 threads: lock(), and mix" {
  stress_all 1 "$S" -w spin -t 2 -n 1000 -m lock
  stress_all 2 "$S" -w spin -t 2 -n 600 -m mix -l 3
}

@test "every lock, yield, 6 threads: lock(), and mix" {
  stress_all 3 "$S" -w yield -t 6 -n @2000@ -m lock
  stress_all 4 "$S" -w yield -t 6 -n @1000@ -m mix -l 3
}

@test "every lock, park, 6 threads: lock(), and mix" {
  stress_all 5 "$S" -w park -t 6 -n 600 -m lock
  stress_all 6 "$S" -w park -t 6 -n 400 -m mix -l 3
}

# node_algos: the locks that take queue nodes from the pool (ls_node_alloc
# in their file or a header of theirs), the only ones its caches serve
node_algos() {
  local all n
  all=" $(algos lock | tr '\n' ' ') "
  for n in $(algos_with_code 'ls_node_alloc\('); do
    [[ "$all" == *" $n "* ]] && echo "$n"
  done
  return 0
}

@test "every lock that takes queue nodes, park, 6 threads, mix, without node counting (the pool's per-thread caches in use)" {
  local names= n
  for n in $(node_algos); do
    [ -z "${STRESS_ALGOS:-}" ] || [[ " $STRESS_ALGOS " == *" $n "* ]] && names+=" $n"
  done
  [ -n "$names" ] || [ -z "${STRESS_ALGOS:-}" ] || skip "no lock of STRESS_ALGOS takes queue nodes"
  [[ "$names " == *" mcs "* || -n "${STRESS_ALGOS:-}" ]] || { echo "node_algos misses mcs: $names"; return 1; }
  STRESS_COUNT_NODES=0 validate_lists "$names" 9 "$S" -w park -t 6 -n 400 -m mix -l 3
  STRESS_COUNT_NODES=0 validate_lists "$names" 10 "$S-inject" -w park -t 6 -n 200 -m mix -l 3
}

@test "every lock, park with no spinning and no yielding (every waiter sleeps), 6 threads, mix" {
  LOCKSWAP_YIELD=0 TEST_SHARED_PATH=1 stress_all 7 "$S" -w park -S 0 -t 6 -n @1000@ -m mix -l 3
}

# 10 us: far below a time slice, so most attempts time out, yet enough for a
# correct handshake-based try lock (clh-try, mcs-try) to move; at 2 us they
# crawl at a few acquisitions per second with 6 threads on 2 cores.
@test "every lock, park, 6 threads, timedlock only with a 10 us patience (many timeouts)" {
  stress_all 8 "$S" -w park -t 6 -n 500 -m timed -p 10000
}

# --- the same under fault injection ------------------------------------------

@test "every lock, -inject, spin, 2 threads: lock(), and mix" {
  # Few iterations: an injected yield by the next owner of a FIFO lock
  # costs the spinner's whole time slice.
  stress_all 11 "$S-inject" -w spin -t 2 -n 300 -m lock
  stress_all 12 "$S-inject" -w spin -t 2 -n 150 -m mix -l 3
}

@test "every lock, -inject, yield, 6 threads, mix" {
  stress_all 13 "$S-inject" -w yield -t 6 -n @400@ -m mix -l 3
}

@test "every lock, -inject, park, 6 threads: lock(), and mix" {
  stress_all 14 "$S-inject" -w park -t 6 -n 400 -m lock
  stress_all 15 "$S-inject" -w park -t 6 -n 400 -m mix -l 3
}

@test "every lock, -inject, park with no spinning or yielding, 6 threads, mix" {
  LOCKSWAP_YIELD=0 TEST_SHARED_PATH=1 stress_all 17 "$S-inject" -w park -S 0 -t 6 -n @400@ -m mix -l 3
}

# --- tunables of particular locks --------------------------------------------

@test "alock is safe with more threads than slots (1, 2 and 3 slots, 6 threads)" {
  local n
  for n in 1 2 3; do
    run timeout 30 env LOCKSWAP_ALOCK_SLOTS=$n "$S" -a alock -w park -t 6 -n 600 -m mix -l 2
    [ "$status" -eq 0 ] || { echo "slots=$n: $output"; return 1; }
    run timeout 30 env LOCKSWAP_ALOCK_SLOTS=$n "$S-inject" -a alock -w yield -t 6 -n 300 -m lock
    [ "$status" -eq 0 ] || { echo "slots=$n -inject: $output"; return 1; }
  done
}

@test "backoff with extreme delays (1 ns; max below min) still excludes" {
  run timeout 30 env LOCKSWAP_BACKOFF_MIN=1 LOCKSWAP_BACKOFF_MAX=1 "$S-inject" -a backoff -w park -t 6 -n 600 -m mix
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  run timeout 30 env LOCKSWAP_BACKOFF_MIN=20000 LOCKSWAP_BACKOFF_MAX=10 "$S" -a backoff -w spin -t 2 -n 2000 -m mix
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
}
