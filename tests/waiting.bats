#!/usr/bin/env bats
# The waiting policy of every lock (issue 2, item 8), with tests/unit/waiting.c
# linking the algorithms directly: under park a waiter blocks in futex(2) and
# the releaser wakes it (and each acquirer the next: a chain of 3 sleepers);
# under spin and yield a waiter is never seen asleep in the kernel. Runs for
# every algorithm of `lockswap --names --cap lock`; native timedlock (cap
# timeout) is checked to sleep too; locks with cap fifo must serve waiters
# that queued one after another (each started once the previous one slept)
# in that order.
load helpers
: "${WAITING:=$UNIT/waiting}" # WAITING=PATH tests another build
W=$WAITING
# Under spin and yield, the waiters are looked at 50 times, 1 ms apart: a
# lock that sleeps does so once its spin or yield budget is spent, which
# is microseconds (LOCKSWAP_SPIN, LOCKSWAP_YIELD) or, for the budgets in
# time, a few milliseconds at most (lockswap --list --long); the waiters
# spin all the while, so a longer look costs CPU and finds nothing more.
SAMPLES=50

# waiting_all CAPS ARGS... : the program for every algorithm with CAPS.
waiting_all() {
  local caps=$1 names a rc out failed=()
  shift
  # shellcheck disable=SC2086
  names=$(algos $caps)
  [ -n "$names" ] || { echo "no algorithm has capabilities: $caps"; return 1; }
  for a in $names; do
    rc=0
    out=$(timeout -k 2 60 "$W" -a "$a" "$@" 2>&1) || rc=$?
    if [ "$rc" -ne 0 ]; then
      failed+=("$a")
      printf '=== %s: %s exit %d\n%s\n' "$a" "$*" "$rc" "$out"
    fi
  done
  [ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}"; return 1; }
}

@test "waiting checks fail for a lock that never sleeps, and for one whose unlock wakes nobody" {
  run timeout 30 "$W" -a selftest-spinner -w park -T 1
  [ "$status" -eq 1 ]
  [[ "$output" == *"not asleep in futex(2)"* ]]
  run timeout 30 "$W" -a selftest-nowake -w park -T 1
  [ "$status" -eq 1 ]
  [[ "$output" == *"never got the lock after it was released"* ]]
  run timeout 30 "$W" -a selftest-nowake -w spin -T 1 -S "$SAMPLES"
  [ "$status" -eq 1 ]
  [[ "$output" == *"asleep in the kernel"*"never sleeps"* ]]
}

@test "waiting -f fails for a lock that claims FIFO and serves the last arrival first" {
  run timeout 30 "$W" -a selftest-lifo -w park -f -n 3
  [ "$status" -eq 1 ]
  [[ "$output" == *"not FIFO: waiter 0 queued #1 but got the lock #3"* ]]
}

@test "fifo: every FIFO lock serves 4 queued sleepers in arrival order" {
  waiting_all fifo -w park -f -n 4
}

@test "park: every lock's waiters sleep in futex(2) and are woken one after another (3 waiters)" {
  waiting_all lock -w park -n 3
}

@test "park: native timedlock sleeps in futex(2) too, and is woken" {
  waiting_all timeout -w park -m timed -n 3
}

@test "spin: no lock's waiter ever sleeps (2 waiters)" {
  waiting_all lock -w spin -n 2 -S "$SAMPLES"
}

@test "yield: no lock's waiter ever sleeps (2 waiters)" {
  waiting_all lock -w yield -n 2 -S "$SAMPLES"
}
