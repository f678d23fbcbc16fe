#!/usr/bin/env bats
# pthread_cancel and the lock calls, under every algorithm (issue 2, item 5):
# a waiter blocked in a condvar wait is cancelled with its mutex re-acquired
# before the cleanup handlers run; a cancelled waiter does not swallow a
# concurrent signal; mutex lock calls are not cancellation points.
load helpers
TEST_TIMEOUT=20
P="$PROGS/cancel"

# Every algorithm under park; under yield, where the waiting is wait.c's
# for most, those with a waiting path of their own (helpers.bash,
# TEST_POLICY_OWN).
both_policies() {
  each_algo "" -- "$@" && TEST_POLICY_OWN=1 each_algo "" yield -- "$@" || return 1
}

@test "glibc itself passes every cancel case (the specification)" {
  # shellcheck disable=SC2046
  run timeout 60 "$P" $("$P" 2>&1 | sed -n 's/^cases://p')
  [ "$status" -eq 0 ] || { echo "native: $output"; return 1; }
}

# The cases in one process per algorithm and policy (run_case runs the
# cases named in order; a failure names its file:line): each case makes its
# own threads, mutexes and condvars and joins its threads before the next.
@test "cancel in wait, timedwait, clockwait (both clocks, both condvar clocks) and in timedwait on a CLOCK_MONOTONIC condvar: mutex re-acquired before the cleanup handler, busy for others while it runs; a cancel racing with the start of the wait: the handler always finds the mutex held (60 rounds); a waiter cancelled while a signal is sent does not consume it: the other waiter wakes (40 rounds); mutex lock, timedlock and clocklock are not cancellation points: the lock is taken, the cancel acts later; with a cancel pending, a thread's first and later lock, unlock, trylock, timed locks, init, destroy, signal, broadcast all complete and testcancel acts; with cancellation disabled a cancel does not end the wait, it acts once enabled again" {
  both_policies "$P" in-wait in-wait-monotonic racing signal-not-consumed lock-not-cancellation-point pending disabled
}
