#!/usr/bin/env bats
# Condition variables under every algorithm (issue 2, item 5): no lost
# wake-ups, no return without a signal issued after the wait began (even when
# the waiter is interrupted by signals), broadcast wakes all, timed waits on
# the condvar's clock or clockwait's clock return ETIMEDOUT holding the mutex,
# waiters sleep in the kernel. Cancellation is in cancel.bats. Every case
# runs under the default policy (park) and under yield.
load helpers
TEST_TIMEOUT=30
P="$PROGS/condvar"
BROKEN="$B/doubles-core/broken.so"

both_policies() {
  each_algo "" -- "$@" && each_algo "" yield -- "$@"
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
  both_policies "$P" signal
}

@test "no lost wake-ups: one-slot buffer, 3x400 items, 3 producers, 3 consumers, signal only" {
  both_policies "$P" no-lost-wakeup
}

@test "no return without a signal: waiters interrupted 100 times by a signal handler keep waiting; earlier signals are not remembered" {
  both_policies "$P" no-spurious
}

@test "broadcast wakes every waiter (20 rounds of 8 single waits, every wait function)" {
  both_policies "$P" broadcast
}

@test "n signals wake n single waiters, with or without the mutex held" {
  both_policies "$P" signal-each
}

@test "timedwait on a default and a CLOCK_REALTIME condvar: ETIMEDOUT not before the deadline, mutex held" {
  both_policies "$P" timedwait-realtime
}

@test "timedwait honours pthread_condattr_setclock(CLOCK_MONOTONIC)" {
  both_policies "$P" timedwait-monotonic
}

@test "clockwait on CLOCK_MONOTONIC and CLOCK_REALTIME, whatever the condvar's clock" {
  both_policies "$P" clockwait
}

@test "timed waits: EINVAL for a bad tv_nsec or clock, EPERM without the errorcheck mutex; the mutex stays as it was" {
  each_algo "" -- "$P" timed-einval
}

@test "timed waits signalled before their deadline return 0 (both clocks)" {
  both_policies "$P" timed-signalled
  both_policies "$P" timed-signalled-monotonic
}

@test "waiters block in the kernel, under every waiting policy" {
  each_algo "" -- "$P" blocks
  each_algo "" yield -- "$P" blocks
  each_algo "" spin -- "$P" blocks
}

@test "a condvar works with every mutex type; a recursive mutex comes back at depth 1" {
  each_algo "" -- "$P" mutex-types
}

@test "waiters woken by a broadcast still exclude each other" {
  both_policies "$P" broadcast-exclusion
}

@test "destroy and free right after a broadcast, while waiters are leaving" {
  both_policies "$P" destroy-reuse
}
