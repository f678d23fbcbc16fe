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

# The case must fail (or hang, then be killed) under the broken double.
fails_when_broken() {
  local mode=$1; shift
  run timeout 2 env BROKEN_DOUBLE="$mode" LD_PRELOAD="$BROKEN" "$@"
  [ "$status" -ne 0 ] || { echo "passed although BROKEN_DOUBLE=$mode: $output"; return 1; }
}

@test "glibc itself passes every condvar case (the specification)" {
  for c in $("$P" 2>&1 | sed -n 's/^cases://p'); do
    run timeout 30 "$P" "$c"
    [ "$status" -eq 0 ] || { echo "native $c: $output"; return 1; }
  done
}

@test "the condvar checks fail on a spurious wake-up, a lost wake-up, a timeout without the mutex" {
  fails_when_broken condspurious "$P" no-spurious
  fails_when_broken condlost "$P" no-lost-wakeup
  fails_when_broken condlost "$P" broadcast
  fails_when_broken condunlocked "$P" timedwait-realtime
  fails_when_broken condunlocked "$P" clockwait
  fails_when_broken condspurious "$P" timedwait-monotonic
}

@test "signal: a 100-round ping-pong, the mutex held on every return" {
  both_policies "$P" signal || return 1
}

@test "no lost wake-ups: one-slot buffer, 3x400 items, 3 producers, 3 consumers, signal only" {
  both_policies "$P" no-lost-wakeup || return 1
}

@test "no return without a signal: waiters interrupted 100 times by a signal handler keep waiting; earlier signals are not remembered" {
  both_policies "$P" no-spurious || return 1
}

@test "broadcast wakes every waiter (20 rounds of 8 single waits, every wait function)" {
  both_policies "$P" broadcast || return 1
}

@test "n signals wake n single waiters, with or without the mutex held" {
  both_policies "$P" signal-each || return 1
}

@test "timedwait on a default and a CLOCK_REALTIME condvar: ETIMEDOUT not before the deadline, mutex held" {
  both_policies "$P" timedwait-realtime || return 1
}

@test "timedwait honours pthread_condattr_setclock(CLOCK_MONOTONIC)" {
  both_policies "$P" timedwait-monotonic || return 1
}

@test "clockwait on CLOCK_MONOTONIC and CLOCK_REALTIME, whatever the condvar's clock" {
  both_policies "$P" clockwait || return 1
}

@test "timed waits: EINVAL for a bad tv_nsec or clock, EPERM without the errorcheck mutex; the mutex stays as it was" {
  each_algo "" -- "$P" timed-einval || return 1
}

@test "timed waits signalled before their deadline return 0 (both clocks)" {
  both_policies "$P" timed-signalled || return 1
  both_policies "$P" timed-signalled-monotonic || return 1
}

@test "waiters block in the kernel, under every waiting policy" {
  each_algo "" -- "$P" blocks || return 1
  TEST_POLICY_OWN=1 each_algo "" yield -- "$P" blocks || return 1
  TEST_POLICY_OWN=1 each_algo "" spin -- "$P" blocks || return 1
}

@test "a condvar works with every mutex type; a recursive mutex comes back at depth 1" {
  each_algo "" -- "$P" mutex-types || return 1
}

@test "waiters woken by a broadcast still exclude each other" {
  both_policies "$P" broadcast-exclusion || return 1
}

@test "destroy and free right after a broadcast, while waiters are leaving" {
  both_policies "$P" destroy-reuse || return 1
}
