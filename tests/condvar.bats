#!/usr/bin/env bats
# Condition variables under every algorithm (issue 2, item 5): no lost
# wake-ups, no return without a signal issued after the wait began (even when
# the waiter is interrupted by signals), broadcast wakes all, timed waits on
# the condvar's clock or clockwait's clock return ETIMEDOUT holding the mutex,
# waiters sleep in the kernel. Cancellation is in cancel.bats. Every case
# runs under the default policy (park) and under yield (see both_policies).
load helpers
TEST_TIMEOUT=30
P="$PROGS/condvar"
BROKEN="$B/doubles-core/broken.so"

# Every algorithm under park; under yield, where the waiting is wait.c's
# for most, those with a waiting path of their own (helpers.bash,
# TEST_POLICY_OWN).
both_policies() {
  each_algo "" -- "$@" && TEST_POLICY_OWN=1 each_algo "" yield -- "$@" || return 1
}

# every case of the program (the list it prints without arguments)
cases() {
  "$P" 2>&1 | sed -n 's/^cases://p'
}

# fails_when_broken "MODE CASE"...: each case must fail (or hang, then be
# killed after 2 s) under the broken double in its mode; all at once, each
# in a process of its own, so that the hangs wait out their 2 s together
fails_when_broken() {
  local mc pids=() i st
  for mc in "$@"; do
    timeout 2 env BROKEN_DOUBLE="${mc% *}" LD_PRELOAD="$BROKEN" "$P" "${mc#* }" >/dev/null 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    st=0
    wait "${pids[i]}" || st=$?
    [ "$st" -ne 0 ] || { echo "${*:i+1:1}: passed although broken"; return 1; }
  done
}

@test "glibc itself passes every condvar case (the specification)" {
  # shellcheck disable=SC2046
  run timeout 60 "$P" $(cases)
  [ "$status" -eq 0 ] || { echo "native: $output"; return 1; }
}

@test "the condvar checks fail on a spurious wake-up, a lost wake-up, a timeout without the mutex" {
  fails_when_broken "condspurious no-spurious" "condlost no-lost-wakeup" "condlost broadcast" \
    "condunlocked timedwait-realtime" "condunlocked clockwait" "condspurious timedwait-monotonic"
}

# Every case in one process per algorithm and policy (run_case runs the
# cases named in order, and a failure names its case and file:line): the
# cases are independent, each with its own condvar and mutex.
@test "every algorithm, park and yield: a 100-round signal ping-pong with the mutex held on every return; no lost wake-ups (one-slot buffer, 3x400 items, 3 producers, 3 consumers, signal only); no return without a signal (waiters interrupted 100 times by a signal handler keep waiting, earlier signals are not remembered); broadcast wakes every waiter (20 rounds of 8 single waits, every wait function); n signals wake n single waiters, with or without the mutex held; woken waiters still exclude each other; destroy and free right after a broadcast while waiters leave; destroy with a waiter still blocked waits until it leaves (its deadline, another thread's signal) and returns 0, as glibc's does, never EBUSY; timedwait on a default and a CLOCK_REALTIME condvar returns ETIMEDOUT not before the deadline with the mutex held, and honours pthread_condattr_setclock(CLOCK_MONOTONIC); clockwait on either clock whatever the condvar's; timed waits signalled before their deadline return 0 (both clocks); EINVAL for a bad tv_nsec or clock, EPERM without the errorcheck mutex, the mutex as it was; a condvar works with every mutex type, a recursive mutex comes back at depth 1; waiters block in the kernel (under spin too)" {
  both_policies "$P" signal no-lost-wakeup no-spurious broadcast signal-each broadcast-exclusion destroy-reuse destroy-waits \
    timedwait-realtime timedwait-monotonic clockwait timed-signalled timed-signalled-monotonic timed-einval \
    mutex-types blocks || return 1
  TEST_POLICY_OWN=1 each_algo "" spin -- "$P" blocks
}
